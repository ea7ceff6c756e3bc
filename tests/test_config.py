"""Configuration flags: defaults, validation, ARIGNOTE_FLAGS, the config file,
change_flags, and what warn_float64 does."""
from __future__ import annotations

import os
import subprocess
import sys
import warnings

import numpy as np
import pytest

from arignote import config, function, tensor
from arignote.config import Config

SRC = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src")
PRINT_FLAGS = ("import arignote; c = arignote.config; "
               "print(c.floatX, c.warn_float64, c.mode, c.device, c.allow_gc, c.on_unused_input)")


def run_python(code: str, **env: str) -> subprocess.CompletedProcess:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("ARIGNOTE")}
    environ.update(env, PYTHONPATH=SRC, HOME=env.get("HOME", "/nonexistent"))
    return subprocess.run([sys.executable, "-c", code], env=environ, capture_output=True,
                          text=True, timeout=60)


def test_defaults():
    fresh = Config()
    assert (fresh.floatX, fresh.warn_float64, fresh.mode, fresh.device, fresh.allow_gc,
            fresh.on_unused_input) == ("float64", "ignore", "FAST_RUN", "cpu", False, "raise")
    for name in ("floatX", "warn_float64", "mode", "device", "allow_gc", "on_unused_input"):
        assert name in fresh.describe() and name in dir(fresh)


@pytest.mark.parametrize("name, good, bad", [
    ("floatX", ["float32", "float16", "float64"], ["float128", "int32", ""]),
    ("warn_float64", ["warn", "raise", "ignore", "pdb"], ["yes", "Warn"]),
    ("mode", ["FAST_COMPILE", "FAST_RUN", "Mode", "DebugMode", "DEBUG_MODE", "NanGuardMode"],
     ["fast", "DebugMode2"]),
    ("profile", [True, False], ["sometimes"]),
    ("compute_test_value", ["off", "ignore", "warn", "raise"], ["on", "Raise"]),
    ("device", ["cpu"], ["tpu", "cuda7x"]),
    ("on_unused_input", ["warn", "ignore", "raise"], ["never"]),
])
def test_values_are_checked_when_set(name, good, bad):
    fresh = Config()
    for value in good:
        setattr(fresh, name, value)
        assert getattr(fresh, name) == value
    for value in bad:
        with pytest.raises(ValueError, match=rf"{name}={value!r} is invalid: expected"):
            setattr(fresh, name, value)


@pytest.mark.parametrize("text, value", [("True", True), ("1", True), ("off", False),
                                         ("no", False), (False, False)])
def test_boolean_flags_accept_the_usual_spellings(text, value):
    fresh = Config()
    fresh.allow_gc = text
    assert fresh.allow_gc is value


def test_boolean_flag_refuses_other_text():
    with pytest.raises(ValueError, match="allow_gc='maybe' is invalid"):
        Config().allow_gc = "maybe"


def test_unknown_flags_suggest_the_right_one():
    with pytest.raises(AttributeError, match=r"no flag 'floatx'; did you mean 'floatX'"):
        _ = config.floatx
    with pytest.raises(AttributeError, match="known flags"):
        config.floatX_typo = "float32"


def test_change_flags_restores_on_exit_and_on_exception():
    with config.change_flags(floatX="float32", allow_gc=True):
        assert config.floatX == "float32" and config.allow_gc is True
        assert tensor.vector().dtype == "float32"
    assert config.floatX == "float64" and config.allow_gc is False
    with pytest.raises(RuntimeError):
        with config.change_flags({"floatX": "float16"}):
            assert config.floatX == "float16"
            raise RuntimeError("boom")
    assert config.floatX == "float64"


def test_change_flags_takes_a_list_of_pairs_as_theano_did():
    with config.change_flags([("floatX", "float32"), ("allow_gc", True)], mode="FAST_COMPILE"):
        assert (config.floatX, config.allow_gc, config.mode) == ("float32", True, "FAST_COMPILE")
    assert config.floatX == "float64" and config.allow_gc is False
    with pytest.raises(ValueError):
        config.change_flags([("floatX",)])  # not a pair


def test_change_flags_restores_what_was_assigned_inside_and_nests():
    with config.change_flags(floatX="float32"):
        config.floatX = "float16"
        with config.change_flags(floatX="float64"):
            assert config.floatX == "float64"
        assert config.floatX == "float16"
    assert config.floatX == "float64"


def test_change_flags_checks_everything_before_changing_anything():
    with pytest.raises(ValueError, match="change_flags: flag mode='nope'"):
        with config.change_flags(floatX="float32", mode="nope"):
            pass
    assert config.floatX == "float64"
    with pytest.raises(AttributeError, match="no flag 'floatx'"):
        with config.change_flags(floatx="float32"):
            pass


def test_change_flags_as_a_decorator():
    @config.change_flags(floatX="float32")
    def inside():
        return config.floatX
    assert inside() == "float32" and inside() == "float32"
    assert config.floatX == "float64"


# ------------------------------------------------------------------ environment and file
def test_arignote_flags_parsed_at_import():
    done = run_python(PRINT_FLAGS, ARIGNOTE_FLAGS="floatX=float32,warn_float64=warn")
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["float32", "warn", "FAST_RUN", "cpu", "False", "raise"]


def test_arignote_flags_with_spaces_case_and_empty_items():
    done = run_python(PRINT_FLAGS, ARIGNOTE_FLAGS=" floatx = float16 ,, allow_gc=true,")
    assert done.returncode == 0, done.stderr
    assert done.stdout.split()[0] == "float16" and done.stdout.split()[4] == "True"


@pytest.mark.parametrize("flags, message", [
    ("floatX=float128", "ARIGNOTE_FLAGS: flag floatX='float128' is invalid"),
    ("warn_float=warn", "ARIGNOTE_FLAGS: there is no flag 'warn_float'; did you mean 'warn_float64'"),
    ("floatX", "ARIGNOTE_FLAGS entry 'floatX' is not of the form name=value"),
])
def test_bad_arignote_flags_fail_at_import_with_a_clear_error(flags, message):
    done = run_python("import arignote", ARIGNOTE_FLAGS=flags)
    assert done.returncode != 0
    assert message in done.stderr.splitlines()[-1]


def test_config_file_and_its_precedence(tmp_path):
    rc = tmp_path / "arignoterc"
    rc.write_text("[global]\nfloatX = float32\nmode = FAST_COMPILE\nallow_gc = yes\n"
                  "[other]\nignored = 1\n")
    done = run_python(PRINT_FLAGS, ARIGNOTERC=str(rc))
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["float32", "ignore", "FAST_COMPILE", "cpu", "True", "raise"]
    done = run_python(PRINT_FLAGS, ARIGNOTERC=str(rc), ARIGNOTE_FLAGS="floatX=float16")
    assert done.stdout.split()[:2] == ["float16", "ignore"]


def test_config_file_in_home_is_read(tmp_path):
    (tmp_path / ".arignoterc").write_text("[global]\nwarn_float64 = raise\n")
    done = run_python(PRINT_FLAGS, HOME=str(tmp_path))
    assert done.returncode == 0, done.stderr
    assert done.stdout.split()[1] == "raise"


@pytest.mark.parametrize("content, message", [
    ("[global]\nfloatX = float8\n", "[global]: flag floatX='float8' is invalid"),
    ("[global]\nflotX = float32\n", "there is no flag 'flotX'; did you mean 'floatX'"),
    ("not an ini file", "cannot parse it"),
])
def test_bad_config_file_fails_with_its_path(tmp_path, content, message):
    rc = tmp_path / "rc"
    rc.write_text(content)
    done = run_python("import arignote", ARIGNOTERC=str(rc))
    assert done.returncode != 0
    last = done.stderr.splitlines()[-1]
    assert str(rc) in last and message in last


def test_missing_config_file_named_by_arignoterc(tmp_path):
    done = run_python("import arignote", ARIGNOTERC=str(tmp_path / "absent"))
    assert done.returncode != 0 and "not a file" in done.stderr


def test_load_applies_a_mapping():
    fresh = Config()
    fresh.load({"ARIGNOTERC": "", "ARIGNOTE_FLAGS": "on_unused_input=warn"})
    assert fresh.on_unused_input == "warn"


# ------------------------------------------------------------------ the flags at work
def test_floatx_sets_constructor_and_python_float_dtypes():
    with config.change_flags(floatX="float32"):
        assert tensor.matrix().dtype == "float32"
        assert (tensor.fvector() * 1.1).dtype == "float32"
        assert tensor.constant(0.1).dtype == "float32"


def test_warn_float64_warn_points_at_the_users_line():
    with config.change_flags(warn_float64="warn"):
        with pytest.warns(UserWarning, match="float64 variable 'x'") as record:
            tensor.dvector("x")
        assert record[0].filename == __file__


def test_warn_float64_raise():
    with config.change_flags(warn_float64="raise"):
        with pytest.raises(TypeError, match="float64"):
            tensor.dvector()
        with pytest.raises(TypeError, match="float64"):
            tensor.fvector() * tensor.dscalar()
        with pytest.raises(TypeError, match="float64"):
            tensor.vector()  # floatX is float64 in the tests


def test_warn_float64_follows_theano_constant_rules():
    """Under floatX=float64, a Python float that float32 holds exactly (1.5) becomes a
    float32 constant, so ``fvector * 1.5`` stays float32 and nothing warns; 1.1 needs
    float64, so ``fvector * 1.1`` is float64 and warns. Constants themselves never
    warn (Theano checked variables, not constants)."""
    f = tensor.fvector("f")
    with config.change_flags(warn_float64="raise"):
        assert (f * 1.5).dtype == "float32"
        assert tensor.constant(1.1).dtype == "float64"
        with pytest.raises(TypeError, match="float64"):
            f * 1.1
    with config.change_flags(warn_float64="raise", floatX="float32"):
        assert (f * 1.1).dtype == "float32"
        assert (tensor.ivector() * f).dtype == "float32"


def test_warn_float64_ignore_is_silent():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tensor.dvector()


def test_on_unused_input_default_comes_from_config():
    x, y = tensor.dvector("x"), tensor.dvector("y")
    with config.change_flags(on_unused_input="ignore"):
        assert np.array_equal(function([x, y], x * 2)(np.ones(1), np.ones(1)), [2.0])
