"""Synthetic MNIST in the real format: a gzip pickle of (train, valid, test), each
(X float32 [N, 784] in [0, 1), y int64 [N]). Learnable: each class is one smooth random
28x28 prototype (so 5x5 filters see structure), each image 0.6 of it plus 0.4 uniform noise.
Usage: make_mnist.py N_TRAIN N_VALID N_TEST OUT (write it with numpy < 2 if the real Theano,
numpy 1.23, is to read it: numpy 2's pickles name numpy._core)."""
import gzip
import pickle
import sys

import numpy as np

n_train, n_valid, n_test = (int(a) for a in sys.argv[1:4])
rng = np.random.RandomState(1234)
# Smooth 28x28 prototypes (so 5x5 filters see structure): random blobs, blurred.
proto = rng.rand(10, 28, 28)
for _ in range(3):
    proto = (proto + np.roll(proto, 1, 1) + np.roll(proto, -1, 1)
             + np.roll(proto, 1, 2) + np.roll(proto, -1, 2)) / 5
low = proto.min(axis=(1, 2), keepdims=True)
proto = (proto - low) / (proto.max(axis=(1, 2), keepdims=True) - low)
proto = proto.reshape(10, 784)


def mnist_set(n):
    y = rng.randint(0, 10, size=n).astype("int64")
    X = (0.6 * proto[y] + 0.4 * rng.rand(n, 784)) * 0.999
    return X.astype("float32"), y


with gzip.open(sys.argv[4], "wb") as f:
    pickle.dump((mnist_set(n_train), mnist_set(n_valid), mnist_set(n_test)), f, protocol=2)
