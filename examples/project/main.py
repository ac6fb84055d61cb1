"""Entry point of a multi-file project: code from a package, data from a file."""
import json

from trainer.schedule import learning_rates

with open("configs/base.json") as f:
    config = json.load(f)
rates = learning_rates(config["lr"], config["steps"])
print("project-demo: %d steps, lr %s" % (config["steps"], ", ".join("%.2g" % r for r in rates)),
      flush=True)
