from torch.nn.attention.flex_attention import *

mask_mod = noop_mask
