"""Process-wide switches under PyTorch's names: deterministic algorithms, float32 matmul
precision, and ``torch.backends`` (served here as ember_tensor.backend_flags)."""
import pytest

import ember_tensor as et
from ember_tensor import backend_flags


@pytest.fixture(autouse=True)
def restore():
    yield
    et.use_deterministic_algorithms(False)
    et.set_float32_matmul_precision("highest")


def test_deterministic_algorithms():
    assert not et.are_deterministic_algorithms_enabled() and et.get_deterministic_debug_mode() == 0
    et.use_deterministic_algorithms(True)
    assert et.are_deterministic_algorithms_enabled() and et.get_deterministic_debug_mode() == 2
    et.use_deterministic_algorithms(True, warn_only=True)
    assert et.is_deterministic_algorithms_warn_only_enabled() and et.get_deterministic_debug_mode() == 1
    et.set_deterministic_debug_mode("default")
    assert not et.are_deterministic_algorithms_enabled()
    et.set_deterministic_debug_mode(2)
    assert et.are_deterministic_algorithms_enabled() and not et.is_deterministic_algorithms_warn_only_enabled()


def test_deterministic_errors_as_pytorch():
    with pytest.raises(TypeError, match="argument 'mode' \\(position 1\\) must be bool, not str"):
        et.use_deterministic_algorithms("yes")
    with pytest.raises(RuntimeError, match="^invalid value of debug_mode, expected 0, 1, or 2, but got 5$"):
        et.set_deterministic_debug_mode(5)
    with pytest.raises(RuntimeError, match="expected one of `default`, `warn`, `error`, but got x$"):
        et.set_deterministic_debug_mode("x")
    with pytest.raises(TypeError, match="^debug_mode must be str or int, but got <class 'float'>$"):
        et.set_deterministic_debug_mode(1.0)


def test_matmul_precision_and_allow_tf32_are_one_setting():
    assert et.get_float32_matmul_precision() == "highest"
    assert backend_flags.cuda.matmul.allow_tf32 is False
    et.set_float32_matmul_precision("high")
    assert backend_flags.cuda.matmul.allow_tf32 is True
    backend_flags.cuda.matmul.allow_tf32 = False
    assert et.get_float32_matmul_precision() == "highest"
    with pytest.warns(UserWarning, match="is not one of 'highest', 'high', or 'medium'"):
        et.set_float32_matmul_precision("fast")
    assert et.get_float32_matmul_precision() == "highest"


def test_unknown_matmul_flag_is_an_attribute_error():
    with pytest.raises(AttributeError, match="^Unknown attribute allow_tf33$"):
        backend_flags.cuda.matmul.allow_tf33
    with pytest.raises(AttributeError, match="^Unknown attribute allow_tf33$"):
        backend_flags.cuda.matmul.allow_tf33 = True


def test_libraries_ember_does_not_use_are_not_available():
    flags = backend_flags
    assert not any([flags.cudnn.is_available(), flags.mkldnn.is_available(), flags.mps.is_available(),
                    flags.mps.is_built(), flags.mkl.is_available(), flags.opt_einsum.is_available()])
    assert flags.cudnn.version() is None and flags.cuda.is_built()
    assert flags.cpu.get_cpu_capability() in ("AVX512", "AVX2", "DEFAULT")


def test_flags_programs_set_are_kept():
    import ember_tensor.backend_flags.cudnn as cudnn

    assert (cudnn.enabled, cudnn.benchmark, cudnn.deterministic, cudnn.allow_tf32) == (True, False, False, True)
    cudnn.benchmark, cudnn.deterministic = True, True
    try:
        assert backend_flags.cudnn.benchmark and backend_flags.cudnn.deterministic
    finally:
        cudnn.benchmark, cudnn.deterministic = False, False
    backend_flags.cuda.enable_flash_sdp(False)
    assert not backend_flags.cuda.flash_sdp_enabled()
    backend_flags.cuda.enable_flash_sdp(True)
