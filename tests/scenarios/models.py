"""The models the scenario suite trains: what a researcher would write
for the Digits data (8 x 8 images, 10 classes). Importable by name, so a
state_dict of one loads with `--module models:MLP` (or CNN, ResNet).

MLP and CNN start with a batch-norm layer on the raw input, the common
way to standardise inputs, so that a near-constant input is a batch-norm
channel, as it is in the issue's report. ResNet is the small residual
network trained with SGD whose healthy statistics trail its moving
weights a little in a feature or two.

The other five are the architectures an outside evaluation found the
suite lacking, on the images scaled to [0, 1]: DropMLP, three
Linear-BatchNorm1d-ReLU blocks with dropout after the first two (so
before the second and third batch-norm layers), and FuncDropMLP, the
same with F.dropout called in its forward; Conv1dNet, each image's
rows as channels and its columns as positions, Conv1d with BatchNorm1d
on (N, C, L); PostBNMLP, batch norm after the nonlinearity; and
PreResMLP, pre-activation residual blocks (BN-ReLU-Linear twice, plus
the skip) and a final batch norm. RandomNet is DropMLP drawing at random
in the ways the dump must tell apart (F.dropout, nothing, noise in both
modes). DeepDropMLP stacks eight blocks with the dropout directly
before each batch-norm layer, where dropout's variance shift accumulates
enough to cost evaluation mode.
"""

import torch
import torch.nn.functional as F
from torch import nn


class MLP(nn.Module):
    def __init__(self, hidden=64, momentum=0.1):
        super().__init__()
        self.inp = nn.BatchNorm1d(64, momentum=momentum)
        self.fc1 = nn.Linear(64, hidden)
        self.bn1 = nn.BatchNorm1d(hidden, momentum=momentum)
        self.fc2 = nn.Linear(hidden, hidden)
        self.bn2 = nn.BatchNorm1d(hidden, momentum=momentum)
        self.out = nn.Linear(hidden, 10)

    def forward(self, x):
        x = self.inp(x.flatten(1))
        x = torch.relu(self.bn1(self.fc1(x)))
        x = torch.relu(self.bn2(self.fc2(x)))
        return self.out(x)


class CNN(nn.Module):
    """channels: 1 for the image, 2 for the image and a validity mask;
    head_bn: a BatchNorm1d on the pooled features before the classifier,
    as re-identification networks put one."""

    def __init__(self, channels=1, width=12, momentum=0.1, head_bn=False):
        super().__init__()
        self.head = (nn.BatchNorm1d(2 * width * 4 * 4, momentum=momentum)
                     if head_bn else nn.Identity())
        self.inp = nn.BatchNorm2d(channels, momentum=momentum)
        self.conv1 = nn.Conv2d(channels, width, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(width, momentum=momentum)
        self.conv2 = nn.Conv2d(width, 2 * width, 3, padding=1)
        self.bn2 = nn.BatchNorm2d(2 * width, momentum=momentum)
        self.out = nn.Linear(2 * width * 4 * 4, 10)

    def forward(self, x):
        x = self.inp(x)
        x = torch.relu(self.bn1(self.conv1(x)))
        x = torch.max_pool2d(torch.relu(self.bn2(self.conv2(x))), 2)
        return self.out(self.head(x.flatten(1)))


class ResNet(nn.Module):
    """A stem, one residual block and global average pooling: convolutions
    without bias, each followed by batch norm."""

    def __init__(self, width=16, momentum=0.1):
        super().__init__()
        self.stem = nn.Conv2d(1, width, 3, padding=1, bias=False)
        self.bn0 = nn.BatchNorm2d(width, momentum=momentum)
        self.conv_a = nn.Conv2d(width, width, 3, padding=1, bias=False)
        self.bn_a = nn.BatchNorm2d(width, momentum=momentum)
        self.conv_b = nn.Conv2d(width, width, 3, padding=1, bias=False)
        self.bn_b = nn.BatchNorm2d(width, momentum=momentum)
        self.out = nn.Linear(width, 10)

    def forward(self, x):
        x = torch.relu(self.bn0(self.stem(x)))
        y = self.bn_b(self.conv_b(torch.relu(self.bn_a(self.conv_a(x)))))
        return self.out(torch.relu(x + y).mean((2, 3)))


class DropMLP(nn.Module):
    def __init__(self, hidden=64, p=0.1, momentum=0.1):
        super().__init__()
        self.fc1 = nn.Linear(64, hidden)
        self.bn1 = nn.BatchNorm1d(hidden, momentum=momentum)
        self.fc2 = nn.Linear(hidden, hidden)
        self.bn2 = nn.BatchNorm1d(hidden, momentum=momentum)
        self.fc3 = nn.Linear(hidden, hidden // 2)
        self.bn3 = nn.BatchNorm1d(hidden // 2, momentum=momentum)
        self.drop = nn.Dropout(p)
        self.out = nn.Linear(hidden // 2, 10)

    def forward(self, x):
        x = self.drop(torch.relu(self.bn1(self.fc1(x.flatten(1)))))
        x = self.drop(torch.relu(self.bn2(self.fc2(x))))
        return self.out(torch.relu(self.bn3(self.fc3(x))))


class FuncDropMLP(DropMLP):
    """DropMLP with its dropout called as a function in the forward, as
    much research code writes it: no nn.Dropout module to find."""

    def __init__(self, hidden=64, p=0.1, momentum=0.1):
        super().__init__(hidden, p, momentum)
        del self.drop
        self.p = p

    def forward(self, x):
        drop = lambda h: F.dropout(h, self.p, training=self.training)  # noqa
        x = drop(torch.relu(self.bn1(self.fc1(x.flatten(1)))))
        x = drop(torch.relu(self.bn2(self.fc2(x))))
        return self.out(torch.relu(self.bn3(self.fc3(x))))


class RandomNet(DropMLP):
    """DropMLP's layers with what draws at random between its batch-norm
    layers written by hand: F.dropout of rate p before the first,
    nothing between the first and the second, and noise added in both
    modes before the third's linear layer."""

    def __init__(self, hidden=64, p=0.3, momentum=0.1):
        super().__init__(hidden, p, momentum)
        del self.drop
        self.p = p

    def forward(self, x):
        h = F.dropout(self.fc1(x.flatten(1)), self.p, self.training)
        h = self.bn2(self.fc2(torch.relu(self.bn1(h))))
        h = self.bn3(self.fc3(h + 0.1 * torch.randn_like(h)))
        return self.out(torch.relu(h))


class Conv1dNet(nn.Module):
    def __init__(self, width=16, momentum=0.1):
        super().__init__()
        self.c1 = nn.Conv1d(8, width, 3, padding=1, bias=False)
        self.n1 = nn.BatchNorm1d(width, momentum=momentum)
        self.c2 = nn.Conv1d(width, 2 * width, 3, padding=1, bias=False)
        self.n2 = nn.BatchNorm1d(2 * width, momentum=momentum)
        self.out = nn.Linear(2 * width, 10)

    def forward(self, x):
        x = torch.relu(self.n1(self.c1(x)))
        x = torch.relu(self.n2(self.c2(x)))
        return self.out(x.mean(-1))


class PostBNMLP(nn.Module):
    def __init__(self, hidden=64, momentum=0.1):
        super().__init__()
        self.fc1 = nn.Linear(64, hidden)
        self.bn1 = nn.BatchNorm1d(hidden, momentum=momentum)
        self.fc2 = nn.Linear(hidden, hidden)
        self.bn2 = nn.BatchNorm1d(hidden, momentum=momentum)
        self.out = nn.Linear(hidden, 10)

    def forward(self, x):
        x = self.bn1(torch.relu(self.fc1(x.flatten(1))))
        x = self.bn2(torch.relu(self.fc2(x)))
        return self.out(x)


class PreResMLP(nn.Module):
    def __init__(self, hidden=48, momentum=0.1):
        super().__init__()
        self.stem = nn.Linear(64, hidden)
        self.blocks = nn.ModuleList(nn.ModuleDict(dict(
            bna=nn.BatchNorm1d(hidden, momentum=momentum),
            la=nn.Linear(hidden, hidden),
            bnb=nn.BatchNorm1d(hidden, momentum=momentum),
            lb=nn.Linear(hidden, hidden))) for _ in range(2))
        self.bnf = nn.BatchNorm1d(hidden, momentum=momentum)
        self.out = nn.Linear(hidden, 10)

    def forward(self, x):
        x = self.stem(x.flatten(1))
        for b in self.blocks:
            y = b["la"](torch.relu(b["bna"](x)))
            x = x + b["lb"](torch.relu(b["bnb"](y)))
        return self.out(torch.relu(self.bnf(x)))


class MaskedBN(nn.BatchNorm1d):
    """Batch norm over padded sequences (N, C, L), the mask (N, 1, L) 1 at
    the real positions: a training batch is normalised by its real
    positions' statistics, and evaluation mode uses the running ones, as
    nn.BatchNorm1d does. buffers="real" averages the same real positions
    into the running statistics; "all" averages the padded tensor's
    (x.mean((0, 2)), padding included): the hand-written masked layer's
    common slip, which no training-mode number shows. buffers="padded"
    is nn.BatchNorm1d itself: every position, padding included, in
    training mode and in the buffers."""

    def __init__(self, features, buffers="real", momentum=0.1):
        super().__init__(features, momentum=momentum)
        self.buffers = buffers

    def forward(self, x, mask):
        if not self.training or self.buffers == "padded":
            return super().forward(x)
        n = mask.sum()
        mean = (x * mask).sum((0, 2)) / n
        var = ((x - mean[None, :, None]) ** 2 * mask).sum((0, 2)) / n
        if self.track_running_stats:
            self._track(x, mean, var, n)
        z = (x - mean[None, :, None]) / torch.sqrt(var[None, :, None] +
                                                   self.eps)
        return z * self.weight[None, :, None] + self.bias[None, :, None]

    @torch.no_grad()
    def _track(self, x, mean, var, n):
        self.num_batches_tracked += 1
        f = (1.0 / float(self.num_batches_tracked) if self.momentum is None
             else self.momentum)
        if self.buffers == "real":
            bm, bv = mean, var * n / (n - 1)
        else:
            bm, bv = x.mean((0, 2)), x.var((0, 2), unbiased=True)
        self.running_mean.mul_(1 - f).add_(f * bm)
        self.running_var.mul_(1 - f).add_(f * bv)


class SeqCNN(nn.Module):
    """Two 1-D convolutions over padded sequences, each followed by a
    MaskedBN, and a mean over the real positions. The input is (N, 2, L):
    the values (0 at padding) and the mask."""

    def __init__(self, width=16, classes=4, buffers="real", momentum=0.1):
        super().__init__()
        self.conv1 = nn.Conv1d(1, width, 5, padding=2)
        self.bn1 = MaskedBN(width, buffers, momentum)
        self.conv2 = nn.Conv1d(width, width, 5, padding=2)
        self.bn2 = MaskedBN(width, buffers, momentum)
        self.out = nn.Linear(width, classes)

    def forward(self, x):
        v, m = x[:, :1], x[:, 1:]
        h = torch.relu(self.bn1(self.conv1(v), m)) * m
        h = torch.relu(self.bn2(self.conv2(h), m)) * m
        return self.out(h.sum(2) / m.sum(2))


class DeepDropMLP(nn.Module):
    """Li et al.'s variance shift as it accumulates with depth: blocks of
    Linear, ReLU, Dropout and BatchNorm1d, the dropout directly before
    each batch-norm layer, the order the "disharmony between dropout and
    batch normalization" write-ups warn of."""

    def __init__(self, blocks=8, hidden=128, p=0.5, momentum=0.1):
        super().__init__()
        self.blocks = nn.ModuleList(nn.ModuleDict(dict(
            fc=nn.Linear(64 if i == 0 else hidden, hidden),
            drop=nn.Dropout(p),
            bn=nn.BatchNorm1d(hidden, momentum=momentum)))
            for i in range(blocks))
        self.out = nn.Linear(hidden, 10)

    def forward(self, x):
        x = x.flatten(1)
        for b in self.blocks:
            x = b["bn"](b["drop"](torch.relu(b["fc"](x))))
        return self.out(x)
