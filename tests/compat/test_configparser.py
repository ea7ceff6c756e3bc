"""theano.configparser under the alias: a library's own flags (AddConfigVar and the params)."""
import warnings

import pytest

from arignote.config import Config, Flag
from tests.compat.conftest import run


def test_each_param_reads_its_default_and_prints_with_the_config(theano):
    from theano.configparser import (AddConfigVar, BoolParam, ConfigParam, DeviceParam, EnumStr,
                                     FloatParam, IntParam, StrParam)
    AddConfigVar("mylib.depth", "layers of the net", IntParam(3))
    AddConfigVar("mylib.rate", "learning rate", FloatParam(0.5))
    AddConfigVar("mylib.name", "what to call it", StrParam("net"))
    AddConfigVar("mylib.fast", "use the fast path", BoolParam(True))
    AddConfigVar("mylib.kind", "which net", EnumStr("mlp", "cnn", "rnn"))
    AddConfigVar("mylib.any", "anything", ConfigParam([1, 2]))
    AddConfigVar("mylib.where", "its device", DeviceParam("cpu"))
    c = theano.config
    assert (c.mylib.depth, c.mylib.rate, c.mylib.name, c.mylib.fast, c.mylib.kind, c.mylib.any,
            c.mylib.where) == (3, 0.5, "net", True, "mlp", [1, 2], "cpu")
    printed = str(c)
    assert "mylib.depth = 3  # layers of the net" in printed and "floatX = 'float64'" in printed
    assert "kind" in dir(c.mylib) and "mylib" in dir(c)


@pytest.mark.parametrize("make, given, value", [
    ("IntParam(0)", "7", 7),
    ("FloatParam(0.0)", "1e-3", 1e-3),
    ("StrParam('a')", "b c", "b c"),
    ("BoolParam(True)", "false", False),
    ("BoolParam(False)", "1", True),
    ("EnumStr('float64', 'float32', convert=lambda s: {'32': 'float32'}.get(s, s))", "32", "float32"),
    ("DeviceParam('cpu')", "cuda1", "cuda1"),
    ("DeviceParam('')", "opencl0:1", "opencl0:1"),
    ("ContextsParam()", "dev0->cuda0;dev1->opencl0:0", "dev0->cuda0;dev1->opencl0:0"),
])
def test_each_param_turns_text_into_its_value(theano, make, given, value):
    from theano import configparser
    param = eval(make, vars(configparser))
    configparser.THEANO_FLAGS_DICT["mylib.flag"] = given
    configparser.AddConfigVar("mylib.flag", "a flag", param, in_c_key=False)
    assert theano.config.mylib.flag == value and param.fullname == "mylib.flag"
    assert param.in_c_key is False and "mylib.flag" not in configparser.THEANO_FLAGS_DICT


@pytest.mark.parametrize("make, given, allowed", [
    ("IntParam(0)", "seven", "expected a value int() takes"),
    ("IntParam(1, is_valid=lambda n: n > 0)", "-2", "which its is_valid accepts (got -2)"),
    ("FloatParam(0.0)", "fast", "expected a value float() takes"),
    ("BoolParam(True)", "maybe", "expected True or False"),
    ("EnumStr('mlp', 'cnn')", "rnn", "expected one of 'mlp', 'cnn'"),
    ("DeviceParam('cpu')", "gpu0", "Theano's old CUDA back end"),
    ("DeviceParam('cpu')", "tpu", "expected 'cpu', 'cuda'"),
    ("ContextsParam()", "cuda0->cuda1", "context name 'cuda0' is a device's name"),
    ("ContextsParam()", "dev0", "not of the form name->device"),
])
def test_a_bad_value_from_theano_flags_raises_naming_flag_value_and_allowed(theano, make, given, allowed):
    from theano import configparser
    configparser.THEANO_FLAGS_DICT["mylib.flag"] = given
    with pytest.raises(ValueError, match=r"THEANO_FLAGS: flag mylib.flag=") as err:
        configparser.AddConfigVar("mylib.flag", "a flag", eval(make, vars(configparser)))
    assert repr(given) in str(err.value) and allowed in str(err.value)
    with pytest.raises(AttributeError):  # not left registered
        _ = theano.config.mylib.flag


def test_assignment_and_change_flags_are_checked(theano):
    from theano.configparser import AddConfigVar, EnumStr, IntParam, change_flags
    AddConfigVar("mylib.kind", "which net", EnumStr("mlp", "cnn"))
    AddConfigVar("mylib.depth", "layers", IntParam(3))
    c = theano.config
    c.mylib.depth = "5"
    assert c.mylib.depth == 5
    with pytest.raises(ValueError, match=r"flag mylib.kind='rnn' is invalid: expected one of 'mlp', 'cnn'"):
        c.mylib.kind = "rnn"
    with c.change_flags({"mylib.kind": "cnn"}, **{"mylib.depth": 9}):
        assert (c.mylib.kind, c.mylib.depth) == ("cnn", 9)
    assert (c.mylib.kind, c.mylib.depth) == ("mlp", 5)

    @change_flags([("mylib.kind", "cnn")])
    def inside():
        return c.mylib.kind
    assert inside() == "cnn" and c.mylib.kind == "mlp"
    with pytest.raises(ValueError, match="change_flags: flag mylib.depth='deep' is invalid"):
        with theano.change_flags(**{"mylib.depth": "deep"}):
            pass


def test_a_name_is_registered_once(theano):
    from theano.configparser import AddConfigVar, BoolParam, IntParam
    AddConfigVar("mylib.depth", "layers", IntParam(3))
    for name, why in [("mylib.depth", "is already a flag"),
                      ("mylib", "clashes with the flag 'mylib.depth'"),
                      ("mylib.depth.inner", "clashes with the flag 'mylib.depth'"),
                      ("floatX", "is already a flag"), ("linker", "is already a flag"),
                      ("DebugMode", "clashes with the flag 'DebugMode.patience'")]:
        with pytest.raises(AttributeError, match=rf"AddConfigVar: '{name}' {why}"):
            AddConfigVar(name, "again", BoolParam(False))
    assert theano.config.mylib.depth == 3


def test_an_invalid_default_raises_unless_the_environment_overrides_it(theano):
    """Theano's own test (theano/tests/test_config.py) in the project's terms."""
    from theano.configparser import THEANO_FLAGS_DICT, AddConfigVar, ConfigParam

    def refuse_invalid(value):
        if value == "invalid":
            raise ValueError()
        return value
    with pytest.raises(ValueError, match=r"AddConfigVar \(the default\): flag mylib.a='invalid' is "
                                         r"invalid: .*its refuse_invalid refused it"):
        AddConfigVar("mylib.a", "unittest", ConfigParam("invalid", filter=refuse_invalid))
    THEANO_FLAGS_DICT["mylib.b"] = "ok"
    AddConfigVar("mylib.b", "unittest", ConfigParam("invalid", filter=refuse_invalid))
    assert theano.config.mylib.b == "ok" and "mylib.b" not in THEANO_FLAGS_DICT
    AddConfigVar("mylib.a", "registered after all", ConfigParam("fine", filter=refuse_invalid))
    assert theano.config.mylib.a == "fine"


def test_a_callable_default_is_called_when_first_read(theano):
    from theano.configparser import AddConfigVar, StrParam
    calls = []

    def probe():
        calls.append(1)
        return "found"
    AddConfigVar("mylib.compiler", "the compiler it finds", StrParam(probe))
    assert calls == []
    assert theano.config.mylib.compiler == "found" and theano.config.mylib.compiler == "found"
    assert calls == [1]


def test_allow_override_false_fixes_the_value(theano):
    from theano.configparser import AddConfigVar, BoolParam, ContextsParam, StrParam
    AddConfigVar("mylib.once", "set once", BoolParam(False, allow_override=False))
    AddConfigVar("mylib.contexts", "named devices", ContextsParam())
    for name, value in [("mylib.once", True), ("mylib.contexts", "a->cuda0")]:
        with pytest.raises(ValueError, match=rf"assignment: flag {name} is fixed once it has a value"):
            setattr(theano.config, name, value)
        with pytest.raises(ValueError, match=rf"change_flags: flag {name} is fixed"):
            with theano.config.change_flags({name: value}):
                pass
    assert theano.config.mylib.once is False and theano.config.mylib.contexts == ""
    AddConfigVar("mylib.later", "set once, its default not read yet", StrParam(lambda: "x",
                                                                                allow_override=False))
    theano.config.mylib.later = "y"  # Theano allowed the one setting before a first read
    assert theano.config.mylib.later == "y"
    with pytest.raises(ValueError, match="is fixed"):
        theano.config.mylib.later = "z"


def test_enumstr_options_must_be_strings(theano):
    from theano.configparser import EnumStr
    with pytest.raises(ValueError, match=r"EnumStr: every option must be a string, got 3 \(int\)"):
        EnumStr("a", 3)


def test_configparam_must_be_a_param(theano):
    from theano.configparser import AddConfigVar
    with pytest.raises(TypeError, match=r"AddConfigVar\('mylib.x'\): configparam must be a ConfigParam"):
        AddConfigVar("mylib.x", "doc", 3)


def test_theano_config_parser_instances_are_the_one_config(theano):
    from theano import configdefaults, configparser
    assert configparser.TheanoConfigParser() is theano.config is configparser.config
    assert configdefaults.TheanoConfigParser() is theano.config
    assert configdefaults.DeviceParam is configparser.DeviceParam
    assert configdefaults.ContextsParam is configparser.ContextsParam
    with configparser.change_flags(floatX="float32"):
        assert theano.config.floatX == "float32"


def test_theano_flags_dict_is_a_mapping_of_the_held_entries(theano):
    from theano.configparser import THEANO_FLAGS_DICT
    THEANO_FLAGS_DICT["mylib.x"] = "1"
    assert THEANO_FLAGS_DICT["mylib.x"] == "1" and "mylib.x" in list(THEANO_FLAGS_DICT)
    assert THEANO_FLAGS_DICT.pop("mylib.x") == "1" and "mylib.x" not in THEANO_FLAGS_DICT
    with pytest.raises(KeyError):
        del THEANO_FLAGS_DICT["mylib.x"]
    assert "floatX" not in THEANO_FLAGS_DICT  # our flags took theirs


# ------------------------------------------------------------------ where values come from
def held_config(**environ):
    """A fresh config that read ``environ`` as arignote and the alias do."""
    fresh = Config()
    fresh.load({"ARIGNOTERC": "", **{k: v for k, v in environ.items() if k.startswith("ARIGNOTE")}})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fresh.load_theano({"THEANORC": "", **{k: v for k, v in environ.items() if k.startswith("THEANO")}})
    return fresh


def register_depth(fresh):
    fresh.register(Flag("mylib.depth", 3, "layers", int), "AddConfigVar")
    return fresh.mylib.depth


def test_values_come_from_every_source_with_the_usual_ranks(tmp_path):
    theanorc, ours = tmp_path / "theanorc", tmp_path / "arignoterc"
    theanorc.write_text("[mylib]\ndepth = 1\n")
    ours.write_text("[mylib]\ndepth = 2\n")
    assert register_depth(held_config()) == 3
    assert register_depth(held_config(THEANORC=str(theanorc))) == 1
    assert register_depth(held_config(THEANORC=str(theanorc), ARIGNOTERC=str(ours))) == 2
    assert register_depth(held_config(THEANORC=str(theanorc), ARIGNOTERC=str(ours),
                                      THEANO_FLAGS="mylib.depth=4")) == 4
    assert register_depth(held_config(THEANO_FLAGS="mylib.depth=4", ARIGNOTE_FLAGS="mylib.depth=5")) == 5


def test_a_held_bad_value_names_its_source(tmp_path):
    rc = tmp_path / "theanorc"
    rc.write_text("[mylib]\ndepth = deep\n")
    with pytest.raises(ValueError, match=rf"config file {rc} \[mylib\]: flag mylib.depth='deep' is invalid"):
        register_depth(held_config(THEANORC=str(rc)))
    with pytest.raises(ValueError, match="ARIGNOTE_FLAGS: flag mylib.depth='deep' is invalid"):
        register_depth(held_config(ARIGNOTE_FLAGS="mylib.depth=deep"))


def test_arignote_flags_still_refuse_unknown_names_of_our_sections_and_undotted_ones():
    with pytest.raises(ValueError, match="there is no flag 'DebugMode.patiense'"):
        Config().load({"ARIGNOTERC": "", "ARIGNOTE_FLAGS": "DebugMode.patiense=3"})
    with pytest.raises(ValueError, match="there is no flag 'warn_float'"):
        Config().load({"ARIGNOTERC": "", "ARIGNOTE_FLAGS": "warn_float=warn"})


def test_a_theano_flag_without_effect_reads_its_value_from_arignote_flags():
    assert held_config(ARIGNOTE_FLAGS="lib.cnmem=0.8").lib.cnmem == "0.8"


def test_a_librarys_flag_end_to_end_under_arignote_run(tmp_path):
    (tmp_path / ".theanorc").write_text("[mylib]\nkind = cnn\n")
    script = tmp_path / "lib.py"
    script.write_text(
        "import theano\n"
        "from theano.configparser import AddConfigVar, EnumStr, IntParam\n"
        "AddConfigVar('mylib.kind', 'which net', EnumStr('mlp', 'cnn', 'rnn'))\n"
        "AddConfigVar('mylib.depth', 'layers', IntParam(3))\n"
        "print(theano.config.mylib.kind, theano.config.mylib.depth)\n"
        "print('mylib.depth = 7' in str(theano.config))\n")
    done = run([str(script)], HOME=str(tmp_path), THEANO_FLAGS="mylib.depth=7")
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["cnn", "7", "True"]
    done = run([str(script)], HOME=str(tmp_path), THEANO_FLAGS="mylib.kind=gru")
    assert done.returncode != 0
    assert ("THEANO_FLAGS: flag mylib.kind='gru' is invalid: expected one of 'mlp', 'cnn', 'rnn'"
            in done.stderr.splitlines()[-1])


@pytest.mark.parametrize("release, expected", [
    ("3.2.0-70-generic", "3.2--generic"),
    ("3.2.0-70.1.2-generic", "3.2--generic"),
    ("2.6.35.14-106.fc14.x86_64", "2.6-fc14.x86_64"),
    ("6.8.0-1015-aws", "6.8--aws"),
    ("5.15.0-91", "5.15-"),
    ("4.4", "4.4"),            # no build part: unchanged
    ("10.1-RELEASE", "10.1-RELEASE"),  # two version numbers: another scheme, unchanged
])
def test_short_platform_drops_the_precise_kernel_numbers(theano, release, expected):
    from theano.configdefaults import short_platform
    assert short_platform(release, f"Linux-{release}-x86_64-with-glibc2.35") == (
        f"Linux-{expected}-x86_64-with-glibc2.35")


def test_short_platform_defaults_to_this_machine(theano):
    import platform

    from theano.configdefaults import short_platform
    assert short_platform() == short_platform(platform.release(), platform.platform())
    assert short_platform(p="Darwin-23.1.0-arm64-arm-64bit", r="23.1.0") == "Darwin-23.1.0-arm64-arm-64bit"
