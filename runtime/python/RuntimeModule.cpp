//===- RuntimeModule.cpp - cleave._runtime: Session for Python
//-------------===//
//
// A thin binding of cleave::rt::SessionGroup (a bundle's devices, as threads
// of this process) over NumPy arrays. The Pythonic
// surface (get_inputs, run with dicts, bfloat16 through ml_dtypes) is
// python/cleave/session.py; this module only converts arrays.
//
//===----------------------------------------------------------------------===//

#include "cleave/rt/Checkpoint.h"
#include "cleave/rt/Runtime.h"
#include "cleave/rt/TrainCommand.h"

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

namespace py = pybind11;
using namespace cleave::rt;

namespace {

/// The NumPy dtype holding a tensor's elements. NumPy has no bfloat16: its
/// bit patterns travel as uint16 and session.py views them as ml_dtypes'.
py::dtype numpyDType(CleaveDType dtype) {
  if (dtype == CLEAVE_BF16)
    return py::dtype("uint16");
  return py::dtype(dtypeName(dtype));
}

/// The dtype of an array fed as `expected`; uint16 stands for bfloat16.
CleaveDType runtimeDType(const py::array &array, CleaveDType expected) {
  std::string name = py::str(array.dtype().attr("name"));
  if (expected == CLEAVE_BF16 && (name == "bfloat16" || name == "uint16"))
    return CLEAVE_BF16;
  return dtypeFromName(name);
}

class PySession {
public:
  PySession(const std::string &bundle, int threads, const std::string &device,
            bool profile) {
    SessionOptions options;
    options.numThreads = threads;
    options.device = device;
    options.profile = profile;
    group = SessionGroup::open(bundle, options);
  }

  const Session &primary() const { return group->primary(); }

  static py::list describe(const std::vector<TensorInfo> &infos) {
    py::list list;
    for (const TensorInfo &info : infos)
      list.append(py::make_tuple(info.name, dtypeName(info.dtype),
                                 py::tuple(py::cast(info.shape))));
    return list;
  }

  py::list run(const py::dict &feeds) {
    std::map<std::string, Tensor> tensors;
    // The arrays whose bytes the tensors borrow, alive until the run ends.
    std::vector<py::array> borrowed;
    for (const auto &[key, value] : feeds) {
      std::string name = py::cast<std::string>(key);
      CleaveDType expected = CLEAVE_DTYPE_INVALID;
      for (const TensorInfo &info : primary().inputs())
        if (info.name == name)
          expected = info.dtype;
      py::array array = py::array::ensure(value, py::array::c_style);
      if (!array)
        throw Error("input '" + name + "' is not convertible to an array");
      CleaveDType dtype = runtimeDType(array, expected);
      if (dtype == CLEAVE_DTYPE_INVALID)
        throw Error("input '" + name + "': unsupported dtype " +
                    std::string(py::str(array.dtype())));
      std::vector<int64_t> shape(array.shape(), array.shape() + array.ndim());
      // The program reads its inputs where they lie: an array aligned to
      // its elements is not copied.
      auto address = reinterpret_cast<uintptr_t>(array.data());
      if (address % cleave_dtype_size(dtype) == 0) {
        tensors.emplace(
            name,
            Tensor::borrowed(dtype, shape, const_cast<void *>(array.data())));
        borrowed.push_back(std::move(array));
      } else {
        tensors.emplace(name, Tensor(dtype, shape, array.data()));
      }
    }

    std::vector<Tensor> outputs;
    {
      py::gil_scoped_release release;
      outputs = group->run(tensors);
    }
    py::list result;
    for (Tensor &output : outputs) {
      // The array keeps the tensor's bytes alive instead of copying them.
      auto *owned = new Tensor(std::move(output));
      py::capsule base(owned, [](void *p) { delete static_cast<Tensor *>(p); });
      result.append(py::array(numpyDType(owned->dtype()), owned->shape(),
                              owned->data(), base));
    }
    return result;
  }

  py::dict trainedParameters() const {
    py::dict result;
    for (auto &[name, tensor] : group->trainedParameters()) {
      auto *owned = new Tensor(std::move(tensor));
      py::capsule base(owned, [](void *p) { delete static_cast<Tensor *>(p); });
      result[py::str(name)] = py::array(numpyDType(owned->dtype()),
                                        owned->shape(), owned->data(), base);
    }
    return result;
  }

  void saveCheckpoint(const std::string &dir, int64_t step) const {
    TrainingPosition position;
    position.step = step;
    py::gil_scoped_release release;
    cleave::rt::saveCheckpoint(*group, position, dir);
  }

  py::dict loadCheckpoint(const std::string &dir) {
    TrainingPosition position;
    {
      py::gil_scoped_release release;
      position = cleave::rt::loadCheckpoint(*group, dir);
    }
    py::dict result;
    result["step"] = position.step;
    result["seed"] = position.seed;
    result["samples"] = position.samples;
    result["epoch"] = position.epoch;
    result["offset"] = position.offset;
    return result;
  }

  py::list profile() const {
    py::list list;
    for (const StepTime &step : primary().profile())
      list.append(py::make_tuple(step.step, step.node, step.seconds));
    return list;
  }

  std::unique_ptr<SessionGroup> group;
};

} // namespace

PYBIND11_MODULE(_runtime, m) {
  m.doc() = "The cleave runtime (libcleave_rt) for Python; use cleave.Session";
  py::register_exception<Error>(m, "Error", PyExc_RuntimeError);
  py::class_<PySession>(m, "Session")
      .def(py::init<const std::string &, int, const std::string &, bool>(),
           py::arg("bundle"), py::arg("threads") = 0, py::arg("device") = "",
           py::arg("profile") = false)
      .def_property_readonly("inputs",
                             [](const PySession &s) {
                               return PySession::describe(s.primary().inputs());
                             })
      .def_property_readonly("outputs",
                             [](const PySession &s) {
                               return PySession::describe(
                                   s.primary().outputs());
                             })
      .def_property_readonly(
          "device", [](const PySession &s) { return s.primary().deviceName(); })
      .def_property_readonly(
          "kernel_isa",
          [](const PySession &s) { return s.primary().kernelIsa(); })
      .def("run", &PySession::run, py::arg("feeds"))
      .def("trained_parameters", &PySession::trainedParameters)
      .def("save_checkpoint", &PySession::saveCheckpoint, py::arg("dir"),
           py::arg("step"))
      .def("load_checkpoint", &PySession::loadCheckpoint, py::arg("dir"))
      .def("learning_rate",
           [](const PySession &s, int64_t step) {
             return s.primary().learningRate(step);
           })
      .def("profile", &PySession::profile)
      .def("memory", [](const PySession &s) {
        py::list ranks;
        for (int rank = 0; rank < s.group->size(); ++rank) {
          SessionMemory memory = s.group->rank(rank).memory();
          py::dict entry;
          entry["arena"] = memory.arena;
          entry["persistent"] = memory.persistent;
          entry["weights"] = memory.weights;
          entry["ports"] = memory.ports;
          entry["packed"] = memory.packed;
          entry["repacked"] = memory.repacked;
          ranks.append(entry);
        }
        return ranks;
      });
  m.def(
      "sample_order",
      [](int64_t samples, uint64_t seed, int64_t epoch) {
        if (samples < 0 || epoch < 0)
          throw Error("sample_order: samples and epoch must not be negative");
        return sampleOrder(samples, seed, epoch);
      },
      py::arg("samples"), py::arg("seed"), py::arg("epoch"),
      "The order `cleave train` takes `samples` samples in during epoch "
      "`epoch` with --seed `seed`.");
}
