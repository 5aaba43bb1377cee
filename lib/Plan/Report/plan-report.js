// Draws the plan report from the plan.json embedded in the page (the
// element #plan-data). Everything is drawn here, in the browser, from that
// one object, so the page and plan.json cannot disagree. No network access:
// the page must work opened from disk.
"use strict";

(function () {
  const SVG_NS = "http://www.w3.org/2000/svg";
  const FIGURE_WIDTH = 1120;

  //===------------------------------------------------------------------===//
  // Formatting
  //===------------------------------------------------------------------===//

  function formatSeconds(seconds) {
    if (seconds === 0) return "0";
    if (seconds < 1e-6) return (seconds * 1e9).toFixed(1) + " ns";
    if (seconds < 1e-3) return (seconds * 1e6).toFixed(1) + " \u00b5s";
    if (seconds < 1) return (seconds * 1e3).toFixed(2) + " ms";
    return seconds.toFixed(2) + " s";
  }

  // Decimal units, as device memory is quoted.
  function formatBytes(bytes) {
    const units = ["B", "kB", "MB", "GB", "TB"];
    let value = bytes;
    let unit = 0;
    while (Math.abs(value) >= 1000 && unit < units.length - 1) {
      value /= 1000;
      ++unit;
    }
    return unit === 0 ? bytes + " B" : value.toFixed(1) + " " + units[unit];
  }

  function formatFlops(flops) {
    const units = ["FLOP", "kFLOP", "MFLOP", "GFLOP", "TFLOP", "PFLOP", "EFLOP"];
    let unit = 0;
    while (flops >= 1000 && unit < units.length - 1) {
      flops /= 1000;
      unit += 1;
    }
    return flops.toFixed(2) + " " + units[unit];
  }

  function formatRate(value) {
    if (value >= 100) return Math.round(value).toLocaleString("en-US");
    return value.toPrecision(3);
  }

  // [0,1,2,5] -> "0\u20132, 5"
  function formatList(values) {
    const sorted = Array.from(new Set(values)).sort((a, b) => a - b);
    const parts = [];
    for (let i = 0; i < sorted.length; ) {
      let j = i;
      while (j + 1 < sorted.length && sorted[j + 1] === sorted[j] + 1) ++j;
      parts.push(i === j ? String(sorted[i]) : sorted[i] + "\u2013" + sorted[j]);
      i = j + 1;
    }
    return parts.join(", ");
  }

  function plural(count, word) {
    return count + " " + word + (count === 1 ? "" : "s");
  }

  //===------------------------------------------------------------------===//
  // DOM and SVG helpers
  //===------------------------------------------------------------------===//

  function element(tag, attributes, parent, text) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attributes || {}))
      node.setAttribute(key, value);
    if (text !== undefined) node.textContent = text;
    if (parent) parent.appendChild(node);
    return node;
  }

  function svgElement(tag, attributes, parent, text) {
    const node = document.createElementNS(SVG_NS, tag);
    for (const [key, value] of Object.entries(attributes || {}))
      node.setAttribute(key, value);
    if (text !== undefined) node.textContent = text;
    if (parent) parent.appendChild(node);
    return node;
  }

  function tooltip(node, text) {
    svgElement("title", {}, node, text);
  }

  function figure(id, width, height) {
    const svg = document.getElementById(id);
    svg.setAttribute("width", width);
    svg.setAttribute("height", height);
    svg.setAttribute("viewBox", "0 0 " + width + " " + height);
    return svg;
  }

  // Shortens `text` to about `width` pixels of 11px text.
  function fit(text, width) {
    const chars = Math.floor(width / 6.3);
    if (chars < 2) return "";
    return text.length <= chars ? text : text.slice(0, chars - 1) + "\u2026";
  }

  function legend(parent, entries) {
    const box = element("div", { class: "legend" }, parent);
    for (const [color, label] of entries) {
      const item = element("span", {}, box);
      element("span", { class: "swatch", style: "background:" + color }, item);
      item.appendChild(document.createTextNode(label));
    }
    return box;
  }

  // Neighbouring stages get distant hues (golden-angle steps).
  function stageColor(stage, lightness) {
    const hue = (205 + stage * 137.508) % 360;
    return "hsl(" + hue.toFixed(1) + ", 58%, " + (lightness || 56) + "%)";
  }

  const COLLECTIVE_COLORS = {
    all_reduce: "#e0702b",
    all_gather: "#d4a017",
    reduce_scatter: "#c2452d",
    send: "#8a4fc9",
    send_recv: "#8a4fc9",
  };

  // Axis ticks: about `count` round values in [0, max].
  function ticks(max, count) {
    if (!(max > 0)) return [0];
    const raw = max / count;
    const magnitude = Math.pow(10, Math.floor(Math.log10(raw)));
    const step = [1, 2, 5, 10].map((f) => f * magnitude).find((s) => s >= raw);
    const values = [];
    for (let v = 0; v <= max * 1.0001; v += step) values.push(v);
    return values;
  }

  //===------------------------------------------------------------------===//
  // The plan, grouped for large meshes
  //===------------------------------------------------------------------===//

  // Segments per stage, in order.
  function segmentsByStage(plan) {
    const byStage = plan.stages.map(() => []);
    for (const segment of plan.segments) byStage[segment.stage].push(segment);
    return byStage;
  }

  // Runs of a repeated pattern of segment classes, e.g. 96 x [attention,
  // MLP]: [{start, period, repeats}], singles having repeats 1.
  function findRepeats(segments) {
    const key = (s) => s.class + (s.lean ? "L" : "") + ":" + s.split_ops;
    const keys = segments.map(key);
    const runs = [];
    let i = 0;
    while (i < keys.length) {
      let best = { period: 1, repeats: 1 };
      for (let period = 1; period <= 8 && i + 2 * period <= keys.length; ++period) {
        let repeats = 1;
        while (i + (repeats + 1) * period <= keys.length) {
          let same = true;
          for (let k = 0; k < period && same; ++k)
            same = keys[i + repeats * period + k] === keys[i + k];
          if (!same) break;
          ++repeats;
        }
        if (repeats >= 2 && period * repeats > best.period * best.repeats)
          best = { period, repeats };
      }
      runs.push({ start: i, period: best.period, repeats: best.repeats });
      i += best.period * best.repeats;
    }
    return runs;
  }

  // Consecutive stages that run the same kind of work: [{first, last}].
  function groupStages(plan, byStage, signature) {
    const groups = [];
    plan.stages.forEach((stage, index) => {
      const sig = signature(stage, byStage ? byStage[index] : null);
      const last = groups[groups.length - 1];
      if (last && last.signature === sig) last.last = index;
      else groups.push({ first: index, last: index, signature: sig });
    });
    return groups;
  }

  function stageLabel(group) {
    return group.first === group.last
      ? "stage " + group.first
      : "stages " + group.first + "\u2013" + group.last;
  }

  function ranksOf(plan, group) {
    const ranks = [];
    for (let s = group.first; s <= group.last; ++s) ranks.push(...plan.stages[s].ranks);
    return ranks;
  }

  function segmentTime(segment) {
    return segment.time_s.compute + segment.time_s.collectives;
  }

  //===------------------------------------------------------------------===//
  // Headline
  //===------------------------------------------------------------------===//

  function drawHeadline(plan) {
    const box = document.getElementById("headline");
    const mesh = plan.mesh;
    const predicted = plan.predicted;
    const card = (label, value, detail) => {
      const node = element("div", { class: "card" }, box);
      element("div", { class: "label" }, node, label);
      element("div", { class: "value" }, node, value);
      if (detail) element("div", { class: "detail" }, node, detail);
      return node;
    };
    card(
      "Mesh",
      "pp " + mesh.pp + " \u00d7 tp " + mesh.tp + " \u00d7 dp " + mesh.dp,
      plural(mesh.pp, "stage") + " \u00d7 " + plural(mesh.tp, "shard") + " \u00d7 " +
        plural(mesh.dp, "replica") + " = " + plural(plan.target.devices, "device") +
        " (" + plan.target.devices_per_node + " per node)"
    );
    card(
      "Throughput",
      formatRate(predicted.throughput_samples_per_s) + " samples/s",
      "global batch " + plan.global_batch + " per step of " + formatSeconds(predicted.step_time_s) +
        " (" + plan.objective + " objective)"
    );
    card(
      "Latency",
      formatSeconds(predicted.latency_s),
      "one microbatch of " + plural(plan.microbatch_size, "sample") + " through every stage"
    );
    card(
      "Pipeline",
      plural(plan.microbatches, "microbatch").replace("microbatchs", "microbatches"),
      "bubble " + (100 * predicted.bubble_fraction).toFixed(1) + "% of the step (fill and drain), " +
        plan.schedule + " schedule"
    );
    const capacity = plan.target.memory_bytes;
    const usable = plan.target.usable_memory_bytes;
    const peak = predicted.peak_memory_bytes;
    const memory = card(
      "Peak memory per device",
      formatBytes(peak),
      "of " + formatBytes(usable) + " usable, " + formatBytes(capacity) + " capacity (" +
        (capacity > 0 ? ((100 * peak) / capacity).toFixed(0) : "?") + "%)"
    );
    const gauge = element("div", { class: "gauge" }, memory);
    element("div", {
      class: peak > usable ? "over" : "",
      style: "width:" + Math.min(100, capacity > 0 ? (100 * peak) / capacity : 0).toFixed(1) + "%",
    }, gauge);
    card(
      "Model",
      plural(plan.model.ops, "op"),
      plural(plan.model.segments, "segment") + ", " + plan.model.distinct_segments + " distinct" +
        (plan.model.sharding_search_exact ? "" : " (sharding search bounded)")
    );
    const training = plan.training;
    if (training) {
      const searched = (choice) => (choice.searched ? " (searched)" : "");
      card(
        "Training step",
        training.optimizer + ", ZeRO " + training.zero.stage,
        (training.precision === "model" ? "the model's precision" : training.precision) + "; ZeRO stage" +
          searched(training.zero) + "; " + training.recompute.segments + " of " +
          plural(plan.model.segments, "segment") + " recompute" + searched(training.recompute) + "; " +
          formatFlops(training.flops.total) + " per step (forward " + formatFlops(training.flops.forward) +
          ", backward " + formatFlops(training.flops.backward) + ")"
      );
    }
  }

  //===------------------------------------------------------------------===//
  // The model by stage
  //===------------------------------------------------------------------===//

  function drawModel(plan, byStage) {
    const tp = plan.mesh.tp;
    const groups = groupStages(plan, byStage, (stage, segments) =>
      segments.map((s) => s.class + ":" + s.split_ops + (s.lean ? "L" : "")).join(",")
    );
    const labelWidth = 230;
    const rowHeight = 46;
    const gap = 8;
    const width = FIGURE_WIDTH;
    const svg = figure("fig-model", width, groups.length * (rowHeight + gap) + 4);
    const barWidth = width - labelWidth - 10;

    groups.forEach((group, row) => {
      const y = row * (rowHeight + gap);
      const segments = byStage[group.first];
      const count = group.last - group.first + 1;
      svgElement("text", { x: 0, y: y + 17, "font-weight": 600 }, svg, stageLabel(group));
      const ranks = ranksOf(plan, group);
      const detail =
        "ranks " + formatList(ranks) + (plan.mesh.dp > 1 ? " \u00d7 " + plan.mesh.dp + " replicas" : "");
      svgElement("text", { x: 0, y: y + 32, class: "muted" }, svg, fit(detail, labelWidth - 8));
      if (count > 1)
        svgElement("text", { x: 0, y: y + 44, class: "muted" }, svg,
          "each stage runs the same " + plural(segments.length, "segment"));

      // Blocks: singles and runs of a repeated pattern, widths by time.
      const runs = findRepeats(segments);
      const times = runs.map((run) => {
        let t = 0;
        for (let k = 0; k < run.period * run.repeats; ++k) t += segmentTime(segments[run.start + k]);
        return t;
      });
      const total = times.reduce((a, b) => a + b, 0) || 1;
      const minWidth = 26;
      let widths = times.map((t) => Math.max(minWidth, (barWidth * t) / total));
      const scale = barWidth / widths.reduce((a, b) => a + b, 0);
      widths = widths.map((w) => w * scale);

      let x = labelWidth;
      runs.forEach((run, index) => {
        const w = widths[index];
        const first = segments[run.start];
        const lastIndex = run.start + run.period * run.repeats - 1;
        const last = segments[lastIndex];
        const blockSegments = segments.slice(run.start, lastIndex + 1);
        const ops = blockSegments.reduce((a, s) => a + s.op_range[1] - s.op_range[0] + 1, 0);
        const split = blockSegments.reduce((a, s) => a + s.split_ops, 0);
        const lean = blockSegments.some((s) => s.lean);
        const node = svgElement("g", { class: "block" }, svg);
        svgElement("rect", {
          x: x + 1, y: y + 2, width: Math.max(1, w - 2), height: rowHeight - 4, rx: 3,
          fill: stageColor(group.first, 78), stroke: stageColor(group.first, 42),
          "stroke-width": lean ? 2.5 : 1, "stroke-dasharray": lean ? "4 2" : "",
        }, node);
        // A tick per repetition when they are wide enough to see.
        if (run.repeats > 1) {
          const step = (w - 2) / run.repeats;
          if (step >= 3)
            for (let r = 1; r < run.repeats; ++r)
              svgElement("line", {
                x1: x + 1 + r * step, x2: x + 1 + r * step, y1: y + 4, y2: y + 12,
                stroke: stageColor(group.first, 42), "stroke-width": 1,
              }, node);
        }
        // The share of ops split over the tensor-parallel group.
        if (tp > 1 && ops > 0)
          svgElement("rect", {
            x: x + 1, y: y + rowHeight - 9, width: Math.max(0, ((w - 2) * split) / ops),
            height: 7, fill: stageColor(group.first, 38),
          }, node);
        const name =
          run.repeats > 1
            ? first.first_op + " \u2026 " + segments[run.start + (run.repeats - 1) * run.period].first_op
            : first.first_op;
        svgElement("text", { x: x + 5, y: y + 24 }, node, fit(name, w - 8));
        if (run.repeats > 1)
          svgElement("text", { x: x + 5, y: y + 36, "font-weight": 600 }, node,
            fit("\u00d7" + run.repeats + (run.period > 1 ? " (" + run.period + " segments each)" : ""), w - 8));
        tooltip(node,
          (run.repeats > 1 ? run.repeats + " repetitions of " + plural(run.period, "segment") + "\n" : "") +
          "segments " + first.index + "\u2013" + last.index + ": " + first.first_op + " \u2192 " + last.last_op +
          "\n" + plural(ops, "op") + ", " + split + " split over " + plural(tp, "shard") + ", " +
          (ops - split) + " replicated" +
          "\n" + formatSeconds(times[index]) + " per microbatch" + (lean ? "\nleaner layout, to fit" : ""));
        x += w;
      });
    });

    const caption = document.getElementById("model-legend");
    const entries = [[stageColor(0, 78), "segments of a stage, wide by predicted time"]];
    if (tp > 1) entries.push([stageColor(0, 38), "share of ops split over the " + tp + " tensor-parallel devices"]);
    legend(caption, entries);
  }

  //===------------------------------------------------------------------===//
  // Devices
  //===------------------------------------------------------------------===//

  function drawDevices(plan) {
    const { pp, tp, dp } = plan.mesh;
    const perNode = plan.target.devices_per_node || 1;
    // Replica blocks of pp rows x tp columns, wrapped over the width.
    const total = pp * tp * dp;
    const cell = total <= 64 ? 26 : total <= 512 ? 12 : total <= 4096 ? 7 : 3;
    // Replicas are identical; a few show the pattern.
    const maxReplicas = 16;
    const shownReplicas = Math.min(dp, maxReplicas);
    const blockWidth = tp * cell + 14;
    const blockHeight = pp * cell + 22;
    const perRow = Math.max(1, Math.floor(FIGURE_WIDTH / blockWidth));
    const rows = Math.ceil(shownReplicas / perRow);
    const more = dp - shownReplicas;
    const svg = figure("fig-devices", Math.min(FIGURE_WIDTH, perRow * blockWidth),
      rows * blockHeight + (more > 0 ? 22 : 4));
    if (more > 0)
      svgElement("text", { x: 0, y: rows * blockHeight + 14, class: "muted" }, svg,
        "\u2026 and " + plural(more, "more replica") + " (ranks " + shownReplicas * pp * tp + "\u2013" +
        (total - 1) + "), laid out the same way");
    for (let r = 0; r < shownReplicas; ++r) {
      const x0 = (r % perRow) * blockWidth;
      const y0 = Math.floor(r / perRow) * blockHeight;
      svgElement("text", { x: x0, y: y0 + 11, class: "muted" }, svg,
        fit("replica " + r, blockWidth));
      const grid = svgElement("g", {}, svg);
      for (let s = 0; s < pp; ++s)
        for (let t = 0; t < tp; ++t) {
          const rank = r * pp * tp + s * tp + t;
          const node = svgElement("rect", {
            x: x0 + t * cell, y: y0 + 16 + s * cell,
            width: cell - (cell > 4 ? 1 : 0), height: cell - (cell > 4 ? 1 : 0),
            fill: stageColor(s, Math.floor(rank / perNode) % 2 ? 50 : 62),
          }, grid);
          tooltip(node, "rank " + rank + ": stage " + s + ", shard " + t + ", replica " + r +
            ", node " + Math.floor(rank / perNode));
          if (cell >= 26)
            svgElement("text", {
              x: x0 + t * cell + cell / 2 - 0.5, y: y0 + 16 + s * cell + cell / 2 + 3.5,
              "text-anchor": "middle", "font-size": 10,
            }, grid, String(rank));
        }
    }
    const caption = document.getElementById("devices-caption");
    caption.textContent =
      "Each block is a replica: a row per pipeline stage, a column per tensor-parallel shard, " +
      "coloured by stage; alternate nodes (" + perNode + " consecutive ranks each) are shaded darker.";

  }

  //===------------------------------------------------------------------===//
  // Memory per device
  //===------------------------------------------------------------------===//

  function drawMemory(plan) {
    const capacity = plan.target.memory_bytes;
    const usable = plan.target.usable_memory_bytes;
    // Every device of a stage holds the same; stages holding the same are
    // one bar.
    // A training plan also holds gradients and optimizer state.
    const parts = [
      ["weights", "#3f7fd9"],
      ["gradients", "#8a63c9"],
      ["optimizer_state", "#c9638a"],
      ["activations", "#49a86b"],
      ["communication", COLLECTIVE_COLORS.all_reduce],
    ].filter(([part]) => plan.stages.length === 0 || part in plan.stages[0].memory_bytes);
    const groups = groupStages(plan, null, (stage) =>
      parts.map(([part]) => stage.memory_bytes[part]).join(","));
    const labelWidth = 250;
    const barHeight = groups.length > 40 ? 12 : 22;
    const gap = groups.length > 40 ? 3 : 8;
    const top = 6;
    const axisHeight = 32;
    const width = FIGURE_WIDTH;
    const plotWidth = width - labelWidth - 90;
    // Against the capacity, unless the plan uses so little of it that the
    // bars would vanish; then the limits are named instead of drawn.
    const largest = Math.max(...plan.stages.map((s) => s.memory_bytes.total), 1);
    const zoomed = largest < 0.2 * usable;
    const max = zoomed ? largest * 1.1 : Math.max(capacity, largest);
    const height = top + groups.length * (barHeight + gap) + axisHeight;
    const svg = figure("fig-memory", width, height);
    const xOf = (bytes) => labelWidth + (plotWidth * bytes) / max;
    groups.forEach((group, row) => {
      const y = top + row * (barHeight + gap);
      const stage = plan.stages[group.first];
      const devices = (group.last - group.first + 1) * plan.mesh.tp * plan.mesh.dp;
      svgElement("text", { x: 0, y: y + barHeight / 2 + 4 }, svg,
        fit(stageLabel(group) + " \u00b7 " + plural(devices, "device"), labelWidth - 8));
      let x = labelWidth;
      const node = svgElement("g", {}, svg);
      for (const [part, color] of parts) {
        const bytes = stage.memory_bytes[part];
        const w = xOf(bytes) - labelWidth;
        svgElement("rect", { x, y, width: Math.max(0, w), height: barHeight, fill: color }, node);
        x += w;
      }
      svgElement("text", { x: x + 6, y: y + barHeight / 2 + 4, class: "muted" }, svg,
        formatBytes(stage.memory_bytes.total));
      tooltip(node, stageLabel(group) + " (ranks " + formatList(ranksOf(plan, group)) +
        (plan.mesh.dp > 1 ? ", in each of " + plan.mesh.dp + " replicas" : "") + ")\n" +
        parts.map(([p]) => p.replace("_", " ") + " " + formatBytes(stage.memory_bytes[p])).join(", "));
    });
    const bottom = top + groups.length * (barHeight + gap);
    if (zoomed) {
      svgElement("text", { x: labelWidth + plotWidth, y: bottom + 26, "text-anchor": "end", fill: "#c23b3b",
        "font-size": 10 }, svg, "usable " + formatBytes(usable) + " and capacity " + formatBytes(capacity) +
        " lie far off this scale");
    } else {
      [[usable, "usable", "5 3", "end", -3], [capacity, "capacity", "", "start", 3]].forEach(
        ([bytes, label, dash, anchor, dx]) => {
          if (!(bytes > 0)) return;
          svgElement("line", {
            x1: xOf(bytes), x2: xOf(bytes), y1: 0, y2: bottom + 18, stroke: "#c23b3b",
            "stroke-width": 1.2, "stroke-dasharray": dash,
          }, svg);
          svgElement("text", {
            x: xOf(bytes) + dx, y: bottom + 26, fill: "#c23b3b", "font-size": 10, "text-anchor": anchor,
          }, svg, label + " " + formatBytes(bytes));
        });
    }
    const axis = svgElement("g", { class: "axis" }, svg);
    svgElement("line", { x1: labelWidth, x2: labelWidth + plotWidth, y1: bottom, y2: bottom }, axis);
    for (const value of ticks(max, 6)) {
      svgElement("line", { x1: xOf(value), x2: xOf(value), y1: bottom, y2: bottom + 4 }, axis);
      svgElement("text", { x: xOf(value), y: bottom + 13, "text-anchor": "middle", class: "muted", "font-size": 10 },
        axis, formatBytes(value));
    }
    legend(document.getElementById("memory-legend"),
      parts.map(([part, color]) => [color, part.replace("_", " ")])
        .concat([["#c23b3b", "usable memory (dashed) and capacity"]]));
  }

  //===------------------------------------------------------------------===//
  // Pipeline timeline
  //===------------------------------------------------------------------===//

  // One row per pipeline stage's devices, with the steps the plan's schedule
  // runs there (plan.json's `timeline`: the compiler simulated them).
  function drawTimeline(plan) {
    const rows = plan.timeline;
    const pp = rows.length;
    let end = 0;
    for (const steps of rows) for (const step of steps) end = Math.max(end, step.end_s);
    end = end || 1;
    const labelWidth = 90;
    const rowHeight = pp > 48 ? 7 : pp > 16 ? 14 : 26;
    const gap = pp > 48 ? 1 : 4;
    const axisHeight = 28;
    const width = FIGURE_WIDTH;
    const plotWidth = width - labelWidth - 10;
    const height = pp * (rowHeight + gap) + axisHeight;
    const svg = figure("fig-timeline", width, height);
    const xOf = (t) => labelWidth + (plotWidth * t) / end;
    const labelEvery = Math.ceil(pp / Math.max(1, Math.floor((pp * (rowHeight + gap)) / 14)));

    rows.forEach((steps, k) => {
      const y = k * (rowHeight + gap);
      if (k % labelEvery === 0 || k === pp - 1)
        svgElement("text", { x: 0, y: y + rowHeight / 2 + 4, "font-size": rowHeight < 10 ? 9 : 11 }, svg,
          "stage " + k);
      svgElement("rect", { x: labelWidth, y, width: plotWidth, height: rowHeight, fill: "#f1f3f7" }, svg);
      const row = svgElement("g", {}, svg);
      for (const step of steps) {
        const stage = plan.stages[step.stage];
        const j = step.microbatch;
        if (step.phase !== "forward") {
          drawPhaseStep(row, step, y, rowHeight, xOf);
          continue;
        }
        const schedule = stage.schedule.length
          ? stage.schedule
          : [{ kind: "compute", name: stage.first_op, time_s: stage.time_s.total }];
        // Runs of events narrower than a few pixels merge into one
        // rectangle, coloured by the kind that takes most of it.
        let t = step.start_s;
        let run = null;
        const flush = () => {
          if (!run) return;
          let kind = "compute";
          let most = -1;
          for (const [name, value] of Object.entries(run.kinds))
            if (value > most) { most = value; kind = name; }
          svgElement("rect", {
            x: xOf(run.t0), y, width: Math.max(0.6, xOf(run.t1) - xOf(run.t0)), height: rowHeight,
            fill: kind === "compute" ? stageColor(step.stage, j % 2 ? 50 : 60) : COLLECTIVE_COLORS[kind] || "#e0702b",
          }, row);
          run = null;
        };
        for (const event of schedule) {
          if (run && run.kind !== event.kind && xOf(run.t1) - xOf(run.t0) >= 2.5) flush();
          if (!run) run = { t0: t, t1: t, kind: event.kind, kinds: {} };
          run.t1 = t + event.time_s;
          run.kind = event.kind;
          run.kinds[event.kind] = (run.kinds[event.kind] || 0) + event.time_s;
          t += event.time_s;
        }
        flush();
        const x0 = xOf(step.start_s);
        const x1 = xOf(step.end_s);
        const hit = svgElement("rect", {
          x: x0, y, width: Math.max(0.6, x1 - x0), height: rowHeight, fill: "transparent",
        }, row);
        tooltip(hit, "stage " + step.stage + ", " + (step.phase === "forward" ? "" : step.phase + " of ") +
          "microbatch " + j + ": " + formatSeconds(step.start_s) + " \u2192 " +
          formatSeconds(step.end_s) + "\ncompute " + formatSeconds(stage.time_s.compute) +
          ", collectives " + formatSeconds(stage.time_s.collectives) + ", send " + formatSeconds(stage.time_s.send));
        if (x1 - x0 >= 16 && rowHeight >= 14)
          svgElement("text", {
            x: (x0 + x1) / 2, y: y + rowHeight / 2 + 4, "text-anchor": "middle", "font-size": 10,
            "pointer-events": "none",
          }, row, String(j));
      }
    });
    const bottom = pp * (rowHeight + gap);
    const axis = svgElement("g", { class: "axis" }, svg);
    svgElement("line", { x1: labelWidth, x2: labelWidth + plotWidth, y1: bottom, y2: bottom }, axis);
    for (const value of ticks(end, 8)) {
      svgElement("line", { x1: xOf(value), x2: xOf(value), y1: bottom, y2: bottom + 4 }, axis);
      svgElement("text", { x: xOf(value), y: bottom + 14, "text-anchor": "middle", class: "muted", "font-size": 10 },
        axis, formatSeconds(value));
    }
    const kinds = new Set();
    for (const stage of plan.stages) for (const event of stage.schedule) kinds.add(event.kind);
    const entries = [[stageColor(0, 56), "compute (alternate microbatches lighter)"]];
    for (const kind of ["all_reduce", "all_gather", "reduce_scatter", "send"])
      if (kinds.has(kind)) entries.push([COLLECTIVE_COLORS[kind], kind === "send" ? "send to the next stage" : kind]);
    const phases = new Set();
    for (const steps of rows) for (const step of steps) phases.add(step.phase);
    for (const phase of ["recompute", "backward", "update"])
      if (phases.has(phase)) entries.push([PHASE_COLORS[phase], phase]);
    entries.push(["#f1f3f7", "idle (pipeline fill and drain)"]);
    legend(document.getElementById("timeline-legend"), entries);
  }

  // A training step's recompute, backward and update are drawn whole (the
  // plan does not split them into their collectives).
  const PHASE_COLORS = { recompute: "#b7a04a", backward: "#5a4fa3", update: "#7a7f8c" };

  function drawPhaseStep(row, step, y, rowHeight, xOf) {
    const x0 = xOf(step.start_s);
    const x1 = xOf(step.end_s);
    const rect = svgElement("rect", {
      x: x0, y, width: Math.max(0.6, x1 - x0), height: rowHeight, fill: PHASE_COLORS[step.phase] || "#7a7f8c",
    }, row);
    tooltip(rect, "stage " + step.stage + ", " + step.phase +
      (step.microbatch >= 0 ? " of microbatch " + step.microbatch : " of the step") + ": " +
      formatSeconds(step.start_s) + " \u2192 " + formatSeconds(step.end_s));
    if (step.microbatch >= 0 && x1 - x0 >= 16 && rowHeight >= 14)
      svgElement("text", {
        x: (x0 + x1) / 2, y: y + rowHeight / 2 + 4, "text-anchor": "middle", "font-size": 10,
        "pointer-events": "none", fill: "#ffffff",
      }, row, String(step.microbatch));
  }

  //===------------------------------------------------------------------===//
  // Training step
  //===------------------------------------------------------------------===//

  // A training plan's phases and update per stage, in a section of its own
  // before the communication.
  function drawTraining(plan) {
    if (!plan.training) return;
    const anchor = document.getElementById("table-communication").previousElementSibling.previousElementSibling;
    const heading = document.createElement("h2");
    heading.textContent = "Training step per stage";
    const caption = document.createElement("p");
    caption.className = "caption";
    caption.textContent = "Forward, recompute and backward per microbatch, the update once per step: the " +
      "data-parallel gradient reduction the last backward does not hide, the optimizer and, under ZeRO, " +
      "the gathering of the updated weights.";
    const table = document.createElement("table");
    table.id = "table-training";
    for (const node of [heading, caption, table]) anchor.parentNode.insertBefore(node, anchor);
    const body = tableOf("table-training", [
      "stage", { label: "forward", num: true }, { label: "recompute", num: true },
      { label: "backward", num: true }, { label: "update", num: true }, { label: "parameters", num: true },
      "gradient reduction", { label: "exposed", num: true }, { label: "optimizer", num: true },
      { label: "weight gather", num: true },
    ]);
    for (const stage of plan.stages) {
      const t = stage.training;
      const reduction = t.update.gradient_reduction;
      row(body, [
        String(stage.index), num(formatSeconds(t.phase_time_s.forward)), num(formatSeconds(t.phase_time_s.recompute)),
        num(formatSeconds(t.phase_time_s.backward)), num(formatSeconds(t.phase_time_s.update)),
        num((t.update.trainable_parameters / 1e6).toFixed(2) + " M"),
        reduction.group.length > 1
          ? reduction.kind + " of " + formatBytes(t.update.gradient_bytes) + " in " +
            plural(reduction.buckets, "bucket") + " over " + formatList(reduction.group) + " (" +
            reduction.link.replace("_", "-") + ")"
          : "none (one replica)",
        num(formatSeconds(reduction.exposed_s)), num(formatSeconds(t.update.optimizer_s)),
        num(formatSeconds(t.update.weight_gather_s)),
      ]);
    }
  }

  //===------------------------------------------------------------------===//
  // Communication
  //===------------------------------------------------------------------===//

  function tableOf(id, headers) {
    const table = document.getElementById(id);
    const head = element("tr", {}, element("thead", {}, table));
    for (const header of headers)
      element("th", { class: header.num ? "num" : "" }, head, header.label || header);
    return element("tbody", {}, table);
  }

  function row(body, cells, className) {
    const tr = element("tr", className ? { class: className } : {}, body);
    for (const cell of cells) {
      const numeric = typeof cell === "object" && cell !== null;
      element("td", numeric ? { class: "num" } : {}, tr, numeric ? cell.text : String(cell));
    }
    return tr;
  }

  const num = (text) => ({ text: String(text) });

  function groupText(kind, group) {
    if (kind === "send_recv" && group.length === 2) return group[0] + " \u2192 " + group[1];
    return formatList(group);
  }

  function drawCommunication(plan) {
    // Per stage: count of each (kind, bytes, link, time); then stages with
    // the same counts are one row.
    const perStage = new Map();
    // A training plan's backward answers each collective of the forward.
    const kindOf = (c) => (c.phase && c.phase !== "forward" ? c.phase + " " : "") + c.kind;
    for (const c of plan.communications) {
      const key = [c.stage, kindOf(c), c.bytes, c.link, c.time_s, c.instances].join("|");
      if (!perStage.has(key)) perStage.set(key, { c, count: 0 });
      perStage.get(key).count += 1;
    }
    const merged = new Map();
    for (const { c, count } of perStage.values()) {
      const key = [kindOf(c), c.bytes, c.link, c.time_s, c.instances, count].join("|");
      if (!merged.has(key)) merged.set(key, { c, count, stages: [] });
      merged.get(key).stages.push(c.stage);
    }
    const body = tableOf("table-communication", [
      "kind", "stages", { label: "per stage", num: true }, { label: "message", num: true },
      { label: "time each", num: true }, { label: "per stage and microbatch", num: true },
      "group (first stage)", "link", { label: "copies at once", num: true },
    ]);
    const rows = Array.from(merged.values()).sort((a, b) => Math.min(...a.stages) - Math.min(...b.stages));
    for (const { c, count, stages } of rows)
      row(body, [
        kindOf(c), formatList(stages), num(count), num(formatBytes(c.bytes)), num(formatSeconds(c.time_s)),
        num(formatSeconds(count * c.time_s)), groupText(c.kind, c.group), c.link.replace("_", "-"),
        num(c.instances),
      ]);
    if (rows.length === 0) row(body, ["none: every stage runs on one device and there is one stage"]);

    const all = document.getElementById("communication-all");
    const limit = 2000;
    element("summary", {}, all,
      "every communication (" + plan.communications.length + (plan.communications.length > limit ? ", first " + limit + " shown" : "") + ")");
    const table = element("table", { id: "table-communication-all" }, all);
    const head = element("tr", {}, element("thead", {}, table));
    for (const h of ["stage", "kind", "value from", "needed by", "bytes", "time", "group", "link"])
      element("th", {}, head, h);
    const allBody = element("tbody", {}, table);
    plan.communications.slice(0, limit).forEach((c) =>
      row(allBody, [c.stage, kindOf(c), c.producer, c.op, num(formatBytes(c.bytes)), num(formatSeconds(c.time_s)),
        groupText(c.kind, c.group), c.link.replace("_", "-")]));
  }

  //===------------------------------------------------------------------===//
  // Alternatives
  //===------------------------------------------------------------------===//

  function drawAlternatives(plan) {
    const latency = plan.objective === "latency";
    const metric = (a) => (latency ? a.latency_s : a.throughput_samples_per_s);
    const feasible = plan.alternatives.filter((a) => a.fits).slice(0, 30);
    const labelWidth = 250;
    const barHeight = 16;
    const gap = 5;
    const axisHeight = 24;
    const width = FIGURE_WIDTH;
    const plotWidth = width - labelWidth - 220;
    const shown = Math.max(1, feasible.length);
    const svg = figure("fig-alternatives", width, shown * (barHeight + gap) + axisHeight);
    const max = Math.max(...feasible.map(metric), 0) || 1;
    const xOf = (v) => labelWidth + (plotWidth * v) / max;
    feasible.forEach((a, i) => {
      const y = i * (barHeight + gap);
      const chosen = a.verdict === "chosen";
      const label = "pp " + a.mesh.pp + " \u00d7 tp " + a.mesh.tp + " \u00d7 dp " + a.mesh.dp + ", m " + a.microbatches +
        (a.schedule ? ", " + a.schedule : "");
      svgElement("text", { x: 0, y: y + barHeight - 4, "font-weight": chosen ? 700 : 400 }, svg, label);
      const bar = svgElement("rect", {
        x: labelWidth, y, width: Math.max(1, xOf(metric(a)) - labelWidth), height: barHeight,
        fill: chosen ? "#2a62c9" : "#9db5df",
      }, svg);
      tooltip(bar, label + ": " + a.verdict);
      svgElement("text", { x: xOf(metric(a)) + 6, y: y + barHeight - 4, class: "muted" }, svg,
        (latency ? formatSeconds(metric(a)) : formatRate(metric(a)) + " samples/s") + (chosen ? "  (chosen)" : ""));
    });
    if (feasible.length === 0)
      svgElement("text", { x: 0, y: barHeight - 4, class: "muted" }, svg, "no configuration fits");
    const bottom = shown * (barHeight + gap);
    const axis = svgElement("g", { class: "axis" }, svg);
    svgElement("line", { x1: labelWidth, x2: labelWidth + plotWidth, y1: bottom, y2: bottom }, axis);
    for (const value of ticks(max, 6)) {
      svgElement("line", { x1: xOf(value), x2: xOf(value), y1: bottom, y2: bottom + 4 }, axis);
      svgElement("text", { x: xOf(value), y: bottom + 14, "text-anchor": "middle", class: "muted", "font-size": 10 },
        axis, latency ? formatSeconds(value) : formatRate(value));
    }
    document.getElementById("alternatives-caption").textContent =
      (latency ? "Microbatch latency" : "Predicted throughput (samples/s)") + " of the " +
      (feasible.length < plan.alternatives.filter((a) => a.fits).length ? "best " : "") +
      plural(feasible.length, "configuration") + " that fit; the table lists all " + plan.alternatives.length +
      " configurations weighed, with why each lost.";

    const body = tableOf("table-alternatives", [
      { label: "pp", num: true }, { label: "tp", num: true }, { label: "dp", num: true },
      { label: "microbatches", num: true }, { label: "throughput", num: true }, { label: "step", num: true },
      { label: "latency", num: true }, { label: "peak memory", num: true }, "schedule", "verdict",
    ]);
    for (const a of plan.alternatives)
      row(body, [
        num(a.mesh.pp), num(a.mesh.tp), num(a.mesh.dp), num(a.microbatches || "\u2013"),
        num(a.fits ? formatRate(a.throughput_samples_per_s) + "/s" : "\u2013"),
        num(a.fits ? formatSeconds(a.step_time_s) : "\u2013"), num(a.fits ? formatSeconds(a.latency_s) : "\u2013"),
        num(a.peak_memory_bytes ? formatBytes(a.peak_memory_bytes) : "\u2013"), a.schedule || "\u2013", a.verdict,
      ], a.verdict === "chosen" ? "chosen" : a.fits ? "" : "unfit");
  }

  //===------------------------------------------------------------------===//

  function offerDownload(plan, text) {
    const link = document.getElementById("plan-json-link");
    if (!link) return;
    link.href = URL.createObjectURL(new Blob([text], { type: "application/json" }));
    link.download = "plan.json";
  }

  function render() {
    const text = document.getElementById("plan-data").textContent;
    const plan = JSON.parse(text);
    const byStage = segmentsByStage(plan);
    drawHeadline(plan);
    drawModel(plan, byStage);
    drawDevices(plan);
    drawMemory(plan);
    drawTimeline(plan);
    drawTraining(plan);
    drawCommunication(plan);
    drawAlternatives(plan);
    offerDownload(plan, text);
    document.body.setAttribute("data-rendered", "yes");
  }

  try {
    render();
  } catch (error) {
    const box = document.getElementById("render-error");
    box.hidden = false;
    box.textContent = "The report could not be drawn: " + error;
    throw error;
  }
})();
