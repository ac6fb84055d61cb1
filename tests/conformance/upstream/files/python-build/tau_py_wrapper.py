import tau_user_module
print('tau-py wrapper')
