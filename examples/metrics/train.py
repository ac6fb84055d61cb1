"""A pretend training loop: a metric line per step, a checkpoint at the end."""
import json
import math
import os
import time

STEPS = 5
ckpt_root = os.path.join(os.environ.get("TAU_DATA_DIR", "/data"), "checkpoints")


def tau_metric(step, **values):
    row = {k: (v if math.isfinite(v) else str(v)) for k, v in values.items()}
    row.update(_step=step, _timestamp=time.time())
    print("TAU_METRIC " + json.dumps(row), flush=True)


for step in range(1, STEPS + 1):
    loss = 2.0 / step
    tau_metric(step, loss=loss, lr=3e-4, grad_norm=float("nan") if step == 3 else 1.0 / step)

path = os.path.join(ckpt_root, "metrics-demo", "step-%d" % STEPS)
os.makedirs(path, exist_ok=True)
with open(os.path.join(path, "weights.json.tmp"), "w") as f:
    json.dump({"step": STEPS, "loss": loss}, f)
os.replace(os.path.join(path, "weights.json.tmp"), os.path.join(path, "weights.json"))
# the marker comes after the checkpoint is durably in place
print("TAU_CHECKPOINT " + json.dumps({"path": path, "step": STEPS}), flush=True)
print("done: %d steps, final loss %.3f" % (STEPS, loss), flush=True)
