"""The GPU peer: the zoo's MLP, LeNet-5, ConvNet and ResNet-20 (docs/models.md) trained with
PyTorch on the same kind of synthetic batches as `ember bench-train`, reporting training
images/s, one JSON line per run. `scripts/gpu-check.sh --peers` runs it on the GPU machine next
to `ember bench-train --device cuda`. PyTorch's defaults stand (its cuDNN convolutions may use
TF32 on the GPU; its fp32 matmuls do not).

    python3 bench/peers/pytorch_train.py --model convnet --batch 64 --steps 200
"""
import argparse
import json
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


def mlp():
    return nn.Sequential(nn.Flatten(), nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 128), nn.ReLU(),
                         nn.Linear(128, 10))


def lenet5():
    return nn.Sequential(
        nn.Conv2d(1, 6, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(6, 16, 5), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
        nn.Linear(400, 120), nn.ReLU(), nn.Linear(120, 84), nn.ReLU(), nn.Linear(84, 10))


def convnet():
    def block(cin, cout):
        return [nn.Conv2d(cin, cout, 3, padding=1), nn.BatchNorm2d(cout), nn.ReLU()]
    return nn.Sequential(
        *block(1, 32), *block(32, 32), nn.MaxPool2d(2), *block(32, 64), *block(64, 64), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(3136, 128), nn.ReLU(), nn.Linear(128, 10))


class BasicBlock(nn.Module):
    """models/resnet.cpp's block: no conv bias, a 1x1 conv + BN shortcut where the shape changes."""

    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.shortcut = None
        if stride != 1 or cin != cout:
            self.shortcut = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        h = F.relu(self.bn1(self.conv1(x)))
        return F.relu(self.bn2(self.conv2(h)) + (self.shortcut(x) if self.shortcut is not None else x))


def resnet20():
    layers = [nn.Conv2d(1, 16, 3, 1, 1, bias=False), nn.BatchNorm2d(16), nn.ReLU()]
    channels = 16
    for width in (16, 32, 64):
        for i in range(3):
            layers.append(BasicBlock(channels, width, 2 if i == 0 and width != 16 else 1))
            channels = width
    return nn.Sequential(*layers, nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(64, 10))


MODELS = {"mlp": mlp, "lenet5": lenet5, "convnet": convnet, "resnet20": resnet20}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", default="convnet", choices=list(MODELS))
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    args = parser.parse_args()
    torch.manual_seed(0)
    device = torch.device(args.device)
    model = MODELS[args.model]().to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    pool = 8  # distinct batches, cycled, as in ember bench-train
    images = [torch.randn(args.batch, 1, 28, 28, device=device) for _ in range(pool)]
    labels = [torch.randint(0, 10, (args.batch,), device=device) for _ in range(pool)]

    def step(i):
        optimizer.zero_grad(set_to_none=True)
        F.cross_entropy(model(images[i % pool]), labels[i % pool]).backward()
        optimizer.step()

    for i in range(args.warmup):
        step(i)
    if device.type == "cuda":
        torch.cuda.synchronize()
    start = time.perf_counter()
    for i in range(args.steps):
        step(i)
    if device.type == "cuda":
        torch.cuda.synchronize()
    seconds = time.perf_counter() - start
    print(json.dumps({"peer": "pytorch", "model": args.model, "batch": args.batch, "device": args.device,
                      "images_per_s": round(args.batch * args.steps / seconds, 1)}))


if __name__ == "__main__":
    main()
