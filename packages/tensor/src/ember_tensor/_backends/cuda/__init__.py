"""ember_tensor._backends.cuda"""
