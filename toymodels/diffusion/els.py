"""Kamb & Ganguli's equivariant local score (ELS) machine (arXiv 2412.20292, Eq. 9-10) as a denoiser."""
from __future__ import annotations

import torch

from . import core


def image_patches(imgs: torch.Tensor, P: int) -> torch.Tensor:
    """Every P×P patch (circular boundary) of images (B, H, W): (B, H·W, P²), row-major over pixels."""
    r = P // 2
    padded = torch.nn.functional.pad(imgs[:, None], (r, r, r, r), mode="circular")
    return torch.nn.functional.unfold(padded, P).transpose(1, 2)


def els_denoiser(train_imgs: torch.Tensor, P: int = 3):
    """Equivariant local score machine (Kamb & Ganguli Eq. 9-10) as a denoiser for ``core.sample``.

    Each pixel's x̂_0 is the posterior-weighted centre of *all* P×P training patches from any location,
    weights softmax(−‖x_Ω − a φ‖²/2σ²) computed from the pixel's own P×P neighbourhood Ω only.
    """
    H, W = train_imgs.shape[-2:]
    phi = image_patches(train_imgs, P).reshape(-1, P * P)                     # (N·H·W, P²)
    centres = phi[:, (P * P) // 2].contiguous()
    phi_sq = (phi * phi).sum(1)

    def denoise(x, a, s, u):
        B = x.shape[0]
        q = image_patches(x.view(B, H, W), P).reshape(-1, P * P)              # (B·H·W, P²)
        w = torch.softmax(core.posterior_logits(q, phi, a, s, phi_sq), dim=-1)
        return (w @ centres).view(B, H * W)

    return denoise
