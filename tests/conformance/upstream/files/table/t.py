print('t')
