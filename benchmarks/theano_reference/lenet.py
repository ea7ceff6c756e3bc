"""DeepLearningTutorials' evaluate_lenet5, unchanged, small: one epoch, 5 + 5 filters, batch 100.

DLT's code/ (convolutional_mlp.py, logistic_sgd.py, mlp.py) in DIR/dlt, the data made by
make_mnist.py in DIR/data (logistic_sgd.load_data looks in dlt/../data). Run as
`arignote run lenet.py DIR` (THEANO_FLAGS picks floatX and the device), or under the real
Theano as `theano-python scipy_shim.py lenet.py DIR`.
"""
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.abspath(sys.argv[1]), "dlt"))
import convolutional_mlp  # noqa: E402

start = time.time()
convolutional_mlp.evaluate_lenet5(n_epochs=1, nkerns=[5, 5], batch_size=100)
print("LENET done in %.1f s" % (time.time() - start))
