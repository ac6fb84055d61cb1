import os
print('hello from', os.environ.get('TAU_RUN_NAME'))
