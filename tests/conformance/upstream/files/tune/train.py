def train_func(config):
    from ray import tune
    tune.report({'loss': config['lr'] * config['batch_size']})
