"""The Ray driver: on a real cluster it would `import ray` and fan out tasks."""
import os

print("ray driver for run %s, world size %s, backend %s" % (
    os.environ.get("TAU_RUN_ID"), os.environ.get("TAU_WORLD_SIZE"),
    os.environ.get("TAU_DIST_BACKEND")), flush=True)
