"""A compact way to write small ONNX graphs for tests.

Tests describe a graph node by node and save it; the importer tests then run
`cleave-translate --import-onnx` on the file. The builder writes exactly what
it is told (no checker, no shape inference), so tests can also produce the
malformed models that the importer must reject.

Example:

    g = GraphBuilder(opset=17)
    x = g.input("x", [2, 3])
    w = g.initializer("w", np.ones((3, 4), np.float32))
    y = g.node("MatMul", [x, w], name="mm")
    g.output(y, [2, 4])
    g.save(sys.argv[1])
"""

import numpy as np
import onnx
from onnx import helper, numpy_helper


def _elem_type(dtype):
    if isinstance(dtype, int):
        return dtype
    return helper.np_dtype_to_tensor_dtype(np.dtype(dtype))


def _value_info(name, shape, dtype):
    """A tensor ValueInfoProto. `shape` entries are ints (static), strings
    (named dynamic dims) or None (unnamed dynamic dims); `shape=None` leaves
    the rank unknown."""
    return helper.make_tensor_value_info(name, _elem_type(dtype), shape)


class GraphBuilder:
    """Builds one ONNX graph and wraps it in a model."""

    def __init__(self, opset=17, name="test", ir_version=8, extra_opsets=None):
        self.opset = opset
        self.name = name
        self.ir_version = ir_version
        self.extra_opsets = dict(extra_opsets or {})
        self.inputs = []
        self.outputs = []
        self.initializers = []
        self.sparse_initializers = []
        self.nodes = []
        self._counter = 0

    def _fresh(self, stem):
        self._counter += 1
        return f"{stem}_{self._counter}"

    def input(self, name, shape, dtype=np.float32):
        self.inputs.append(_value_info(name, shape, dtype))
        return name

    def output(self, name, shape=None, dtype=np.float32):
        """Declares `name` a graph output. With `shape=None` only the element
        type is declared."""
        if shape is None:
            info = onnx.ValueInfoProto()
            info.name = name
            info.type.tensor_type.elem_type = _elem_type(dtype)
        else:
            info = _value_info(name, shape, dtype)
        self.outputs.append(info)
        return name

    def initializer(self, name, array, storage="raw"):
        """Adds an initializer. `storage` is "raw" (raw_data) or "typed" (the
        typed repeated fields: float_data, int64_data, ...)."""
        array = np.asarray(array)
        if storage == "raw":
            tensor = numpy_helper.from_array(array, name)
        elif storage == "typed":
            tensor = helper.make_tensor(
                name,
                _elem_type(array.dtype),
                array.shape,
                array.flatten().tolist(),
                raw=False,
            )
        else:
            raise ValueError(f"unknown storage {storage!r}")
        self.initializers.append(tensor)
        return name

    def const(self, array, name=None, dtype=None):
        """A small constant as an initializer; returns its value name."""
        array = np.asarray(array, dtype=dtype)
        return self.initializer(name or self._fresh("const"), array)

    def node(self, op_type, inputs, outputs=1, name=None, domain=None, **attrs):
        """Adds a node. `outputs` is a count or a list of names; returns the
        output name (one output) or the list of names."""
        if isinstance(outputs, int):
            stem = (name or op_type).lower()
            outputs = [self._fresh(stem) for _ in range(outputs)]
        converted = {}
        for key, value in attrs.items():
            if isinstance(value, np.ndarray):
                value = numpy_helper.from_array(value)
            converted[key] = value
        node = helper.make_node(
            op_type, list(inputs), list(outputs), name=name, domain=domain, **converted
        )
        self.nodes.append(node)
        return outputs[0] if len(outputs) == 1 else list(outputs)

    def graph(self):
        graph = helper.make_graph(
            self.nodes,
            self.name,
            self.inputs,
            self.outputs,
            initializer=self.initializers,
            sparse_initializer=self.sparse_initializers,
        )
        return graph

    def model(self):
        opsets = [helper.make_opsetid("", self.opset)]
        opsets += [helper.make_opsetid(d, v) for d, v in self.extra_opsets.items()]
        model = helper.make_model(
            self.graph(),
            opset_imports=opsets,
            producer_name="cleave-tests",
            producer_version="1",
        )
        model.ir_version = self.ir_version
        return model

    def declare_reference_shapes(self, seed=0):
        """Runs the model in onnxruntime on random inputs and declares each
        graph output with the shape and type it produced. The importer checks
        declared output shapes against the ones it infers, so a test that
        saves such a model fails when cleave's shape rules disagree with the
        reference runtime."""
        import onnxruntime

        model = self.model()
        # Leave the outputs' types to onnxruntime: the declared ones are what
        # this method is about to replace.
        for output in model.graph.output:
            output.ClearField("type")
        session = onnxruntime.InferenceSession(
            model.SerializeToString(), providers=["CPUExecutionProvider"]
        )
        rng = np.random.default_rng(seed)
        feeds = {}
        for arg in session.get_inputs():
            shape = [d if isinstance(d, int) else 1 for d in arg.shape]
            dtype = helper.tensor_dtype_to_np_dtype(
                next(i for i in self.inputs if i.name == arg.name).type.tensor_type.elem_type
            )
            if np.issubdtype(dtype, np.floating):
                feeds[arg.name] = rng.standard_normal(shape).astype(dtype)
            elif dtype == np.bool_:
                feeds[arg.name] = rng.integers(0, 2, shape).astype(np.bool_)
            else:
                feeds[arg.name] = rng.integers(0, 4, shape).astype(dtype)
        names = [o.name for o in self.outputs]
        results = session.run(names, feeds)
        self.outputs = [
            _value_info(name, list(value.shape), value.dtype)
            for name, value in zip(names, results)
        ]
        return results

    def save(self, path, external_data=None):
        """Writes the model to `path`. With `external_data` (a file name next
        to the model), every initializer's bytes go to that file."""
        model = self.model()
        if external_data is None:
            onnx.save(model, path)
        else:
            onnx.save_model(
                model,
                path,
                save_as_external_data=True,
                all_tensors_to_one_file=True,
                location=external_data,
                size_threshold=0,
            )
        return model


def save_raw(path, data):
    """Writes raw bytes (for models that are not valid protobuf)."""
    with open(path, "wb") as f:
        f.write(data)
