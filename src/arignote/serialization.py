"""Saving models: parameters in a format whose loading runs no code, and pickles.

``save(path, params)`` writes a numpy ``.npz`` archive with ``allow_pickle=False``:
one array per parameter (``p0``, ``p1``, ...) and a JSON record ``__arignote__``
with the names, dtypes, shapes and broadcastable patterns. ``load(path)`` reads
it back with ``allow_pickle=False``, so a file can hold nothing but arrays and
text: loading a parameter file never executes code from it. ``load(path,
params)`` sets existing shared variables, checking every one before changing any.

``dump`` / ``load_pickle`` (Theano's ``misc.pkl_utils.dump`` / ``load``) pickle any
object, models with compiled functions included, into a zip file whose arrays are
stored as ``.npy`` members named after their shared variables. Unpickling runs
code from the file: load only pickles you trust.
"""
from __future__ import annotations

import io
import os
import pickle
from typing import IO, TYPE_CHECKING, Any
from collections.abc import Iterable, Mapping

import numpy as np

from arignote.compile.sharedvalue import SharedVariable
from arignote.graph.testvalue import Tag

if TYPE_CHECKING:
    import zipfile

FORMAT = "arignote.params"
META = "__arignote__"
PathOrFile = str | os.PathLike | IO[bytes]


# ------------------------------------------------------------------ save/load
def save(path: PathOrFile, params: Mapping[str, Any] | Iterable[SharedVariable]) -> None:
    """Write ``params`` to ``path`` (a name used as given, or a binary file).

    ``params`` is a list of named shared variables, or a dict of name -> shared
    variable or array. A path is written to a temporary file first and renamed,
    so a failed save leaves no half-written file.
    """
    import json  # here, not at import: ``import arignote`` stays light
    import uuid
    entries = _entries(params)
    arrays = {f"p{k}": value for k, (_, value, _) in enumerate(entries)}
    meta = {"format": FORMAT, "version": 1, "params": [
        {"name": name, "dtype": value.dtype.name, "shape": list(value.shape),
         "broadcastable": list(pattern)} for name, value, pattern in entries]}
    arrays[META] = np.array(json.dumps(meta))
    if not isinstance(path, (str, os.PathLike)):
        _write_npz(path, arrays)
        return
    # Beside the target (so the rename is atomic), created as open() would (umask applies).
    tmp = os.path.join(os.path.dirname(os.path.abspath(path)), f".{os.path.basename(path)}.{uuid.uuid4().hex}")
    try:
        with open(tmp, "xb") as out:
            _write_npz(out, arrays)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def _write_npz(file: IO[bytes], arrays: dict[str, np.ndarray]) -> None:
    """What ``numpy.savez`` writes (one ``name.npy`` member per array), never pickling."""
    import zipfile
    with zipfile.ZipFile(file, "w", zipfile.ZIP_STORED, allowZip64=True) as archive:
        for name, array in arrays.items():
            with archive.open(f"{name}.npy", "w", force_zip64=True) as member:
                np.lib.format.write_array(member, np.asanyarray(array), allow_pickle=False)


def load(path: PathOrFile, params: Mapping[str, SharedVariable] | Iterable[SharedVariable] | None = None
         ) -> dict[str, np.ndarray]:
    """The arrays ``save`` wrote to ``path``, by name, in the order saved.

    With ``params`` (a list of named shared variables, or a dict of name -> shared
    variable), each is also set to the array of its name. Every variable is checked
    first (present in the file, same dtype, same shape as its value now), so a
    refusal changes none of them.
    """
    arrays = _read(path)
    if params is not None:
        targets = _targets(params)
        missing = [name for name in targets if name not in arrays]
        if missing:
            raise KeyError(f"{_describe(path)} has no parameter {', '.join(map(repr, missing))} "
                           f"(it holds {', '.join(map(repr, arrays)) or 'none'}): save them first, "
                           "or pass only the shared variables it holds")
        values = {}
        for name, var in targets.items():
            new, old = arrays[name], var.get_value(borrow=True)
            if new.dtype != var.dtype or new.shape != np.shape(old):
                raise ValueError(
                    f"{_describe(path)} holds {name!r} as dtype {new.dtype} with shape {new.shape}, "
                    f"but shared variable {var.describe()} is dtype {var.dtype} with shape "
                    f"{np.shape(old)}: nothing was loaded; load into a variable of that dtype and "
                    "shape, or cast and reshape the array returned by load(path)")
            values[name] = var.type.filter(new, strict=True, name=f"parameter {name!r}")
        for name, var in targets.items():
            var.set_value(values[name], borrow=True)
    return arrays


def _entries(params: Any) -> list[tuple[str, np.ndarray, tuple[bool, ...]]]:
    if isinstance(params, Mapping):
        items = list(params.items())
    else:
        items = []
        for position, var in enumerate(params):
            if not isinstance(var, SharedVariable):
                raise TypeError(f"save: item {position} is {type(var).__name__}, not a shared variable: "
                                "pass a list of shared variables, or a dict of name -> array")
            if not var.name:
                raise ValueError(f"save: shared variable {var.describe()} (item {position}) has no name: "
                                 "name it (shared(value, name=...)) or pass a dict of name -> variable")
            items.append((var.name, var))
    entries, seen = [], set()
    for name, value in items:
        if not isinstance(name, str):
            raise TypeError(f"save: parameter names must be strings, got {name!r}")
        if name in seen:
            raise ValueError(f"save: the name {name!r} is given twice: parameters need distinct names")
        seen.add(name)
        if isinstance(value, SharedVariable):
            array = value.get_value()
            pattern = getattr(value.type, "broadcastable", None)
        else:
            array, pattern = np.asarray(value), None
        if not isinstance(array, np.ndarray) or array.dtype == object:
            what = "an array of dtype object" if isinstance(array, np.ndarray) else type(array).__name__
            raise TypeError(f"save: parameter {name!r} holds {what}, not an array of numbers: save() "
                            "writes arrays only; pickle other objects with misc.pkl_utils.dump")
        entries.append((name, array, tuple(pattern) if pattern is not None else (False,) * array.ndim))
    return entries


def _targets(params: Any) -> dict[str, SharedVariable]:
    pairs = list(params.items()) if isinstance(params, Mapping) else [
        (getattr(var, "name", None), var) for var in params]
    for name, var in pairs:
        if not isinstance(var, SharedVariable) or not name:
            raise TypeError(f"load: {var!r} is not a named shared variable: pass named shared "
                            "variables, or a dict of name -> shared variable")
        if not hasattr(var.type, "dtype"):
            raise TypeError(f"load: shared variable {var.describe()} holds {var.type}, not an array: "
                            "parameter files hold arrays only")
    return dict(pairs)


def _read(path: PathOrFile) -> dict[str, np.ndarray]:
    import json
    where = _describe(path)
    try:
        archive = np.load(path, allow_pickle=False)
    except ValueError as err:
        raise ValueError(f"{where} is not an arignote parameter file ({err})") from None
    with archive:
        if not isinstance(archive, np.lib.npyio.NpzFile) or META not in archive.files:
            raise ValueError(f"{where} is not an arignote parameter file (no {META} record): "
                             "write it with arignote.save")
        try:
            meta = json.loads(str(archive[META][()]))
            entries = meta["params"] if meta.get("format") == FORMAT else None
        except (ValueError, KeyError, TypeError, AttributeError):
            entries = None
        if not isinstance(entries, list):
            raise ValueError(f"{where} is not an arignote parameter file (its {META} record is "
                             "not one): write it with arignote.save")
        arrays = {}
        for k, entry in enumerate(entries):
            try:
                value = archive[f"p{k}"]
            except ValueError as err:  # numpy refuses object arrays without pickle
                raise ValueError(f"{where}: parameter {entry.get('name')!r} is a pickled object "
                                 f"array, which load() never unpickles ({err})") from None
            if value.dtype.name != entry["dtype"] or list(value.shape) != entry["shape"]:
                raise ValueError(f"{where}: parameter {entry['name']!r} is {value.dtype} {value.shape}, "
                                 f"but the record says {entry['dtype']} {tuple(entry['shape'])}")
            arrays[entry["name"]] = value
    return arrays


def _describe(path: PathOrFile) -> str:
    return f"{os.fspath(path)!r}" if isinstance(path, (str, os.PathLike)) else "the file"


# ------------------------------------------------------------------ pickles
class PersistentNdarrayID:
    """Stores each numpy array met while pickling as a ``.npy`` member of the zip
    (``array_N``), so arrays are not copied into the pickle stream itself."""

    def __init__(self, zip_file: _Members):
        self.zip_file = zip_file
        self.count = 0
        self.seen: dict[int, str] = {}
        self.names: dict[int, str] = {}

    def _resolve_name(self, obj: np.ndarray) -> str:
        name = f"array_{self.count}"
        self.count += 1
        return name

    def __call__(self, obj: Any) -> str | None:
        if type(obj) is not np.ndarray or obj.dtype == object:
            return None
        if id(obj) not in self.seen:
            name = self._resolve_name(obj)
            self.zip_file.add(name, obj)
            self.seen[id(obj)] = f"ndarray.{name}"
        return self.seen[id(obj)]


class PersistentSharedVariableID(PersistentNdarrayID):
    """Names the member holding a shared variable's value after the variable (``w``,
    then ``w_2``... for repeated names)."""

    def __init__(self, zip_file: _Members, allow_unnamed: bool = True, allow_duplicates: bool = True):
        super().__init__(zip_file)
        self.allow_unnamed = allow_unnamed
        self.allow_duplicates = allow_duplicates
        self.used: dict[str, int] = {}

    def name_value(self, var: SharedVariable, value: Any) -> None:
        if not var.name:
            if not self.allow_unnamed:
                raise ValueError(f"unnamed shared variable {var.describe()} (allow_unnamed=False)")
            return
        if var.name == "pkl":
            raise ValueError("a shared variable named 'pkl' cannot be stored: the pickle itself has that name")
        self.names[id(value)] = var.name

    def _resolve_name(self, obj: np.ndarray) -> str:
        name = self.names.get(id(obj))
        if name is None:
            return super()._resolve_name(obj)
        count = self.used.get(name, 0)
        self.used[name] = count + 1
        if count and not self.allow_duplicates:
            raise ValueError(f"several shared variables are named {name!r} (allow_duplicates=False)")
        return name if not count else f"{name}_{count + 1}"


class PersistentNdarrayLoad:
    """Reads the arrays a ``dump`` stored as zip members (never unpickling them)."""

    def __init__(self, zip_file: zipfile.ZipFile):
        self.zip_file = zip_file
        self.cache: dict[str, np.ndarray] = {}

    def __call__(self, persid: str) -> np.ndarray:
        kind, _, name = persid.partition(".")
        if kind != "ndarray":
            raise pickle.UnpicklingError(f"unknown stored object {persid!r}")
        if name not in self.cache:
            with self.zip_file.open(name) as member:
                self.cache[name] = np.lib.format.read_array(member, allow_pickle=False)
        return self.cache[name]


class _Members:
    """The zip members a dump will write, held until the pickle is complete."""

    def __init__(self) -> None:
        self.arrays: list[tuple[str, np.ndarray]] = []

    def add(self, name: str, array: np.ndarray) -> None:
        self.arrays.append((name, array))


class _Pickler(pickle.Pickler):
    def __init__(self, file: IO[bytes], protocol: int, persistent_id: Any):
        super().__init__(file, protocol)
        self.protocol = protocol
        self.persistent = persistent_id

    def persistent_id(self, obj: Any) -> Any:
        return self.persistent(obj)

    def reducer_override(self, obj: Any) -> Any:
        # Lets the member holding a shared variable's value take the variable's name.
        if isinstance(obj, SharedVariable) and obj.origin is obj and hasattr(self.persistent, "name_value"):
            reduced = obj.__reduce_ex__(self.protocol)
            self.persistent.name_value(obj, reduced[1][0])
            return reduced
        return NotImplemented


class StripPickler(pickle.Pickler):
    """A pickler that leaves out the variables' tags ``trace`` and ``test_value`` (and
    ``extra_tag_to_remove``): smaller pickles of graphs, e.g. the arguments of a
    ``function()`` call (Theano's ``misc.pkl_utils.StripPickler``). The objects pickled
    are not changed."""

    def __init__(self, file: IO[bytes], protocol: int = 0, extra_tag_to_remove: Iterable[str] | None = None):
        super().__init__(file, protocol)
        self.tag_to_remove = ["trace", "test_value", *(extra_tag_to_remove or ())]

    def reducer_override(self, obj: Any) -> Any:
        if isinstance(obj, Tag) and any(hasattr(obj, name) for name in self.tag_to_remove):
            rebuild, args, state = obj.__reduce__()
            return rebuild, args, {k: v for k, v in state.items() if k not in self.tag_to_remove}
        return NotImplemented


def dump(obj: Any, file_handler: IO[bytes], protocol: int = pickle.DEFAULT_PROTOCOL,
         persistent_id: Any = PersistentSharedVariableID) -> None:
    """Pickle ``obj`` into a zip written to ``file_handler``: the pickle as member ``pkl``
    and each array as a ``.npy`` member (``numpy.load`` reads them). Everything is
    prepared before the first byte is written, so a failed dump writes nothing."""
    import zipfile
    members = _Members()
    stream = io.BytesIO()
    _Pickler(stream, protocol, persistent_id(members)).dump(obj)
    with zipfile.ZipFile(file_handler, "w", zipfile.ZIP_DEFLATED, allowZip64=True) as archive:
        for name, array in members.arrays:
            with archive.open(name, "w", force_zip64=True) as member:
                np.lib.format.write_array(member, array, allow_pickle=False)
        archive.writestr("pkl", stream.getvalue())  # last, as Theano wrote it


def load_pickle(f: IO[bytes], persistent_load: Any = PersistentNdarrayLoad) -> Any:
    """The object ``dump`` wrote to ``f``. This unpickles: load only files you trust."""
    import zipfile
    with zipfile.ZipFile(f, "r") as archive:
        unpickler = pickle.Unpickler(io.BytesIO(archive.read("pkl")))
        unpickler.persistent_load = persistent_load(archive)
        return unpickler.load()


class CompatUnpickler(pickle._Unpickler):
    """An unpickler for Python 2 pickles of numpy arrays (Theano's ``CompatUnpickler``).

    Open such a file with ``CompatUnpickler(f, encoding="latin1").load()``: a
    constructor that refuses the decoded ``str`` arguments Python 2 wrote as
    byte strings is called again with them encoded back to bytes.
    """

    def _reduce_reencoding(self) -> None:
        args = self.stack.pop()
        func = self.stack[-1]
        try:
            self.stack[-1] = func(*args)
        except Exception:
            if self.encoding is None or not any(isinstance(a, str) for a in args):
                raise
            self.stack[-1] = func(*(a.encode(self.encoding) if isinstance(a, str) else a for a in args))

    dispatch = {**pickle._Unpickler.dispatch, pickle.REDUCE[0]: _reduce_reencoding}
