print('generate')
