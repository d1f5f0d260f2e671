"""``torch.utils.model_zoo``: the older name of ``torch.hub.load_state_dict_from_url``,
which code written before torch.hub (and torchvision's old model files) still calls."""
from ember_tensor.hub import load_state_dict_from_url as load_url

__all__ = ["load_url"]
