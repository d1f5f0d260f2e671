"""Every layer class of ember_nn (``torch.nn.modules``), re-exported by ``ember_nn``."""
from .module import Module
from .container import ModuleDict, ModuleList, ParameterDict, ParameterList, Sequential
from .linear import Bilinear, Identity, LazyLinear, Linear
from .flatten import Flatten, Unflatten
from .conv import (
    Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d, ConvTranspose3d, LazyConv1d, LazyConv2d, LazyConv3d,
    LazyConvTranspose1d, LazyConvTranspose2d, LazyConvTranspose3d,
)
from .pooling import (
    AdaptiveAvgPool1d, AdaptiveAvgPool2d, AdaptiveAvgPool3d, AdaptiveMaxPool1d, AdaptiveMaxPool2d,
    AdaptiveMaxPool3d, AvgPool1d, AvgPool2d, AvgPool3d, LPPool1d, LPPool2d, MaxPool1d, MaxPool2d, MaxPool3d,
    MaxUnpool1d, MaxUnpool2d, MaxUnpool3d, LPPool3d,
)
from .batchnorm import BatchNorm1d, BatchNorm2d, BatchNorm3d, LazyBatchNorm1d, LazyBatchNorm2d, LazyBatchNorm3d
from .instancenorm import (
    InstanceNorm1d, InstanceNorm2d, InstanceNorm3d, LazyInstanceNorm1d, LazyInstanceNorm2d, LazyInstanceNorm3d,
)
from .normalization import GroupNorm, LayerNorm, LocalResponseNorm, RMSNorm
from .dropout import AlphaDropout, Dropout, Dropout1d, Dropout2d, Dropout3d, FeatureAlphaDropout
from .padding import (
    CircularPad1d, CircularPad2d, CircularPad3d, ConstantPad1d, ConstantPad2d, ConstantPad3d, ReflectionPad1d,
    ReflectionPad2d, ReflectionPad3d, ReplicationPad1d, ReplicationPad2d, ReplicationPad3d, ZeroPad1d, ZeroPad2d,
    ZeroPad3d,
)
from .upsampling import Upsample, UpsamplingBilinear2d, UpsamplingNearest2d
from .distance import CosineSimilarity, PairwiseDistance
from .fold import Fold, Unfold
from .pixelshuffle import ChannelShuffle, PixelShuffle, PixelUnshuffle
from .activation import (
    CELU, ELU, GELU, GLU, SELU, Hardshrink, Hardsigmoid, Hardswish, Hardtanh, LeakyReLU, LogSigmoid, LogSoftmax,
    Mish, PReLU, ReLU, ReLU6, RReLU, Sigmoid, SiLU, Softmax, Softmax2d, Softmin, Softplus, Softshrink, Softsign,
    Tanh, Tanhshrink, Threshold,
)
from .loss import (
    BCELoss, BCEWithLogitsLoss, CosineEmbeddingLoss, CrossEntropyLoss, CTCLoss, GaussianNLLLoss,
    HingeEmbeddingLoss, HuberLoss, KLDivLoss, L1Loss, MarginRankingLoss, MSELoss, MultiLabelMarginLoss,
    MultiLabelSoftMarginLoss, MultiMarginLoss, NLLLoss, NLLLoss2d, PoissonNLLLoss, SmoothL1Loss, SoftMarginLoss,
    TripletMarginLoss, TripletMarginWithDistanceLoss,
)
from .sparse import Embedding, EmbeddingBag
from .rnn import GRU, LSTM, RNN, GRUCell, LSTMCell, RNNBase, RNNCell, RNNCellBase
from .attention import MultiheadAttention
from .transformer import (
    Transformer, TransformerDecoder, TransformerDecoderLayer, TransformerEncoder, TransformerEncoderLayer,
)

__all__ = [name for name in dir() if name[0].isupper()]
