import argparse
p = argparse.ArgumentParser()
p.add_argument('--manifest')
p.add_argument('--smoke-pairs', type=int, default=0)
print('trainer', p.parse_args())
