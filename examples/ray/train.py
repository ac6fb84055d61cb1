import os
print("ray driver on", os.uname().nodename, "world size", os.environ.get("TAU_WORLD_SIZE"), flush=True)
