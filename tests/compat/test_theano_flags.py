"""THEANO_FLAGS and .theanorc under the alias: Theano's names mapped onto our flags."""
import os
import subprocess
import sys
import warnings

import pytest

from arignote.compile.mode import get_mode
from arignote.config import Config, TheanoFlagsNotice, config
from tests.compat.conftest import ROOT, run


def theano_config(**environ):
    fresh = Config()
    fresh.load({k: v for k, v in environ.items() if k.startswith("ARIGNOTE")} | {"ARIGNOTERC": ""}
               if "ARIGNOTERC" not in environ else environ)
    with warnings.catch_warnings(record=True) as notices:
        warnings.simplefilter("always")
        fresh.load_theano({"THEANORC": "", **environ})
    return fresh, [str(n.message) for n in notices if n.category is TheanoFlagsNotice]


def test_theano_flags_map_onto_ours():
    c, notices = theano_config(THEANO_FLAGS="floatX=float32,mode=FAST_COMPILE,allow_gc=False,"
                               "on_unused_input=warn,warn_float64=warn,unittests.rseed=42,"
                               "optimizer=None,exception_verbosity=high")
    assert (c.floatX, c.mode, c.allow_gc, c.on_unused_input, c.warn_float64) == (
        "float32", "FAST_COMPILE", False, "warn", "warn")
    assert c.unittests.rseed == 42 and c.optimizer == "None" and c.exception_verbosity == "high"
    assert notices == []


def test_arignote_flags_win_where_both_set_a_flag():
    c, _ = theano_config(ARIGNOTE_FLAGS="floatX=float16", THEANO_FLAGS="floatX=float32,mode=FAST_COMPILE")
    assert c.floatX == "float16" and c.mode == "FAST_COMPILE"


def test_theanorc_sections_and_precedence(tmp_path):
    rc = tmp_path / "theanorc"
    rc.write_text("[global]\nfloatX = float32\nmode = FAST_COMPILE\n[unittests]\nrseed = 7\n"
                  "[lib]\ncnmem = 0.8\n")
    c, notices = theano_config(THEANORC=str(rc))
    assert (c.floatX, c.mode, c.unittests.rseed, c.lib.cnmem) == ("float32", "FAST_COMPILE", 7, "0.8")
    assert len(notices) == 1 and "lib.cnmem" in notices[0]
    c, _ = theano_config(THEANORC=str(rc), THEANO_FLAGS="floatX=float16")
    assert c.floatX == "float16"  # THEANO_FLAGS over .theanorc
    ours = tmp_path / "arignoterc"
    ours.write_text("[global]\nmode = FAST_RUN\n")
    c, _ = theano_config(THEANORC=str(rc), ARIGNOTERC=str(ours))
    assert c.mode == "FAST_RUN" and c.floatX == "float32"  # our file over .theanorc


@pytest.mark.parametrize("device", ["gpu", "gpu0", "gpu3"])
def test_theanos_old_gpu_device_is_refused_with_a_hint(device):
    with pytest.raises(ValueError, match=rf"device={device} names Theano's old CUDA back end.*"
                                         r"device=cuda.*device=opencl"):
        theano_config(THEANO_FLAGS=f"device={device}")


def test_flags_without_meaning_here_are_accepted_with_one_notice():
    c, notices = theano_config(THEANO_FLAGS="lib.cnmem=0.9,gpuarray.preallocate=1,dnn.enabled=False,"
                               "blas.ldflags=-lblas,base_compiledir=/tmp/x,linker=py,no_such_flag=3")
    assert len(notices) == 1
    assert ("lib.cnmem, gpuarray.preallocate, dnn.enabled, blas.ldflags, base_compiledir, linker"
            in notices[0])
    assert "not Theano 1.0 flags: no_such_flag (kept for flags a library registers" in notices[0]
    assert c.lib.cnmem == "0.9" and c.linker == "py" and c.dnn.enabled == "False"
    assert c.cycle_detection == "regular" and c.warn.round is False  # Theano's defaults, readable
    assert c.unpickle_function is True and c.reoptimize_unpickled_function is False
    c.linker = "cvm"  # settable, as Theano code does
    assert c.linker == "cvm"
    with pytest.raises(AttributeError):
        _ = c.no_such_flag


def test_theano_flags_are_read_only_under_the_alias(tmp_path):
    env = {"PYTHONPATH": str(ROOT / "src"), "HOME": str(tmp_path), "THEANO_FLAGS": "floatX=float32"}
    code = "import arignote; print(arignote.config.floatX)"
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "float64", done.stderr
    script = tmp_path / "show.py"
    script.write_text("import theano\nprint(theano.config.floatX, theano.config.linker)\n")
    done = run([str(script)], THEANO_FLAGS="floatX=float32,linker=c|py,not_a_flag=1")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "float32 c|py"
    assert done.stderr.count("TheanoFlagsNotice") == 1 and "not_a_flag" in done.stderr
    assert os.listdir(tmp_path) == ["show.py"]  # nothing written


def test_optimizer_flag_sets_the_default_modes_rewrites():
    assert get_mode(None).optimizer == "fast_run"
    with config.change_flags(optimizer="None"):
        assert get_mode(None).optimizer is None and get_mode("FAST_RUN").optimizer == "fast_run"
    with config.change_flags(optimizer="fast_compile", mode="Mode"):
        assert get_mode(None).optimizer == "fast_compile"


def test_the_debugging_flags_act_and_are_not_listed_as_without_effect():
    c, notices = theano_config(THEANO_FLAGS="DebugMode.check_py=False,DebugMode.patience=3,"
                               "NanGuardMode.big_is_error=False,profiling.n_ops=5,print_test_value=True,"
                               "optimizer_excluding=fusion:inplace,optimizer_including=alloc_empty_to_zeros")
    assert (c.DebugMode.check_py, c.DebugMode.patience, c.NanGuardMode.big_is_error) == (False, 3, False)
    assert (c.profiling.n_ops, c.print_test_value) == (5, True)
    assert c.optimizer_excluding == "fusion:inplace" and c.optimizer_including == "alloc_empty_to_zeros"
    assert notices == []


def test_the_memory_profile_flags_act_and_are_not_listed_as_without_effect():
    c, notices = theano_config(THEANO_FLAGS="profile_memory=True,profiling.min_peak_memory=True,"
                               "profiling.min_memory_size=64")
    assert (c.profile_memory, c.profiling.min_peak_memory, c.profiling.min_memory_size) == (True, True, 64)
    assert notices == []


def test_theano_cxx_reads_empty_while_our_native_compiler_stays_set():
    c, _ = theano_config(THEANO_FLAGS="cxx=cc")
    assert c.cxx == "" and c.own("cxx") == "cc"  # no Op's C code is compiled; native kernels use cc
    c.unload_theano()
    assert c.cxx == "cc"


def test_alias_cxx_is_empty_and_native_kernels_stay_on(theano):
    from arignote.backends.cpu import native_compiler
    theano.config.cxx = "cc"  # a Theano script's setting picks our native kernels' compiler
    assert theano.config.cxx == ""
    assert native_compiler.settings().cxx == config.own("cxx") == "cc"


def test_theano_c_module_flags_are_readable_and_changeable(theano):
    with theano.change_flags(**{"cmodule.debug": True}):  # Theano's test_types decorates with it
        assert theano.config.cmodule.debug is True
    assert theano.config.cmodule.debug is False
