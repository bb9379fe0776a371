# The plain-PyTorch peer of bench/gpu/checks.sh: ResNet-18 with the small-image stem (as trainer's
# model=resnet), a batch of B 1x28x28 inputs already on the GPU (no loader), Adam (PyTorch's default
# foreach implementation); ms/step and samples/s for fp32, fp16 autocast + GradScaler, bf16, and fp16
# without the scaler (no host sync). Usage: python3 ref_resnet.py [B]
import sys, time, torch, torchvision
from torch import nn
B = int(sys.argv[1]) if len(sys.argv) > 1 else 256
def make():
    m = torchvision.models.resnet18(num_classes=10)
    m.conv1 = nn.Conv2d(1, 64, 3, 1, 1, bias=False); m.maxpool = nn.Identity()
    return m.cuda()
x = torch.randn(B, 1, 28, 28, device="cuda"); y = torch.randint(0, 10, (B,), device="cuda")
for mode in ["32", "16-mixed", "bf16-mixed", "16-mixed-nosync"]:
    torch.manual_seed(0); m = make(); opt = torch.optim.Adam(m.parameters(), 1e-3)
    scaler = torch.amp.GradScaler(enabled=mode.startswith("16"))
    dtype = torch.float16 if mode.startswith("16") else torch.bfloat16
    def step():
        opt.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=dtype, enabled=mode != "32"):
            loss = nn.functional.cross_entropy(m(x), y)
        if mode == "16-mixed-nosync":
            loss.backward(); opt.step(); return
        scaler.scale(loss).backward(); scaler.step(opt); scaler.update()
    for _ in range(20): step()
    torch.cuda.synchronize(); t = time.perf_counter(); n = 100
    for _ in range(n): step()
    torch.cuda.synchronize(); dt = (time.perf_counter() - t) / n
    print(f"python resnet18 B={B} {mode}: {dt*1e3:.2f} ms/step, {B/dt:,.0f} samples/s", flush=True)
