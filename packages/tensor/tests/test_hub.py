"""torch.hub: the cache folder, downloads (a file:// URL stands in for the network),
checkpoints from URLs, and hubconf.py entry points from a local folder; offline errors
name what to do."""
import hashlib

import pytest

import ember_tensor as et
from ember_tensor import hub


@pytest.fixture
def hub_dir(tmp_path, monkeypatch):
    monkeypatch.setattr(hub, "_hub_dir", None)
    monkeypatch.setenv("TORCH_HOME", str(tmp_path / "home"))
    return tmp_path


def test_the_folder_follows_torch_home_then_set_dir(hub_dir):
    assert hub.get_dir() == str(hub_dir / "home" / "hub")
    hub.set_dir(hub_dir / "elsewhere")
    assert hub.get_dir() == str(hub_dir / "elsewhere")


def test_a_checkpoint_is_downloaded_once_and_hash_checked(hub_dir):
    payload = hub_dir / "payload.pt"
    et.save({"w": et.arange(3.0)}, payload)
    digest = hashlib.sha256(payload.read_bytes()).hexdigest()
    named = hub_dir / f"weights-{digest[:10]}.pt"
    named.write_bytes(payload.read_bytes())
    state = hub.load_state_dict_from_url(named.as_uri(), check_hash=True, progress=False, weights_only=True)
    assert state["w"].tolist() == [0.0, 1.0, 2.0]
    cached = hub_dir / "home" / "hub" / "checkpoints" / named.name
    assert cached.exists()
    named.unlink()  # from the cache now
    assert hub.load_state_dict_from_url(named.as_uri(), progress=False)["w"].tolist() == [0.0, 1.0, 2.0]
    wrong = hub_dir / "weights-deadbeef.pt"
    wrong.write_bytes(payload.read_bytes())
    with pytest.raises(RuntimeError, match='invalid hash value \\(expected "deadbeef"'):
        hub.load_state_dict_from_url(wrong.as_uri(), check_hash=True, progress=False)
    assert not (hub_dir / "home" / "hub" / "checkpoints" / wrong.name).exists()  # nothing half-written


def test_offline_the_error_says_where_to_put_the_file(hub_dir):
    with pytest.raises(hub.OfflineError, match="Without a network, fetch that file elsewhere and put it at .*x.pt"):
        hub.download_url_to_file("http://127.0.0.1:9/x.pt", str(hub_dir / "x.pt"), progress=False)


def test_hubconf_entry_points_from_a_local_folder(hub_dir):
    repo = hub_dir / "repo"
    repo.mkdir()
    (repo / "hubconf.py").write_text(
        "dependencies = []\n"
        "import ember_tensor\n"
        "def ramp(n, scale=1.0):\n"
        "    '''A ramp of n values.'''\n"
        "    return ember_tensor.arange(float(n)) * scale\n"
        "def _private():\n"
        "    pass\n")
    assert hub.load(str(repo), "ramp", 3, source="local", scale=2.0).tolist() == [0.0, 2.0, 4.0]
    assert hub.list(str(repo)) == ["ramp"]
    assert hub.help(str(repo), "ramp") == "A ramp of n values."
    with pytest.raises(RuntimeError, match="^Cannot find callable nope in hubconf$"):
        hub.load(str(repo), "nope", source="local")
    with pytest.raises(ValueError, match='^Unknown source: "bad". Allowed values: "github" \\| "local".$'):
        hub.load(str(repo), "ramp", source="bad")
    with pytest.raises(FileNotFoundError, match="No such file or directory: .*hubconf.py"):
        hub.load(str(hub_dir), "ramp", source="local")
