"""The same convolution, pooling, batch-norm, neighbours and activation graphs (values and
gradients) under the real Theano 1.0.5 and under arignote, each result saved to an npz, then
compared. Not a test (CI has no Theano); its record is in benchmarks/results/theano-reference.md.

    THEANO_FLAGS=optimizer_excluding=AbstractConvCheck \\
        theano-python scipy_shim.py crosscheck.py theano theano.npz
    python crosscheck.py arignote arignote.npz
    python crosscheck.py compare theano.npz arignote.npz

(AbstractConvCheck refuses a convolution that the C-less Theano cannot lower to its legacy
ConvOp, e.g. dilated or grouped; excluding it leaves AbstractConv's own Python perform.)
"""
import sys
import warnings

import numpy as np


def compare(reference: str, ours: str) -> None:
    a, b = np.load(reference), np.load(ours)
    differ = [k for k in sorted(a.files)
              if a[k].shape != b[k].shape or not np.allclose(a[k], b[k], rtol=1e-7, atol=1e-9)]
    for k in differ:
        print("DIFF", k, a[k].shape, b[k].shape)
    print(f"{len(a.files)} results compared, {len(differ)} differ; only in {ours}: "
          f"{sorted(set(b.files) - set(a.files))}")


def main(library: str, path: str) -> None:
    warnings.simplefilter("ignore")
    if library == "theano":
        import theano as th
        import theano.tensor as T
        from theano.tensor.nnet import bn, neighbours as nb
        from theano.tensor.signal import pool
    else:
        import arignote as th
        import arignote.tensor as T
        from arignote.tensor.nnet import bn, neighbours as nb
        from arignote.tensor.signal import pool
    rng = np.random.RandomState(0)
    res = {}

    def attempt(key, fn, *args):
        """Theano's Python mode lacks some gradients: those keys are left out, and said."""
        try:
            res[key] = fn(*args)
        except Exception as err:  # noqa: BLE001 - reported, then the next graph
            print(f"{key}: {type(err).__name__}")

    x, w, g = T.dtensor4("x"), T.dtensor4("w"), T.dtensor4("g")
    img, kern = rng.randn(2, 4, 7, 8), rng.randn(6, 4, 3, 2)
    convs = {"valid": {}, "full": dict(border_mode="full"), "half": dict(border_mode="half"),
             "int": dict(border_mode=1), "pair": dict(border_mode=(2, 1)),
             "stride": dict(border_mode="half", subsample=(2, 3)),
             "dil": dict(filter_dilation=(2, 2), border_mode=1),
             "groups": dict(num_groups=2, border_mode="full", subsample=(2, 1))}
    for name, kw in convs.items():
        for flip in (True, False):
            y = T.nnet.conv2d(x, w, filter_flip=flip, **kw)
            gx, gw = th.grad((y ** 2).sum() * 0.5, [x, w])
            out = th.function([x, w], [y, gx, gw])(img, kern[:, :2] if "num_groups" in kw else kern)
            for tag, v in zip(("y", "gx", "gw"), out):
                res[f"conv-{name}-{flip}-{tag}"] = v
    y = T.nnet.conv2d_transpose(g, w, output_shape=(2, 4, 8, 7), border_mode=1, input_dilation=(2, 2))
    res["transpose"] = th.function([g, w], y)(rng.randn(2, 6, 4, 4), kern)
    x5, w5 = T.dtensor5("x5"), T.dtensor5("w5")
    y = T.nnet.conv3d(x5, w5, border_mode="half", subsample=(1, 2, 1))
    gx, gw = th.grad((y ** 2).sum(), [x5, w5])
    out = th.function([x5, w5], [y, gx, gw])(rng.randn(2, 2, 5, 4, 5), rng.randn(3, 2, 3, 2, 3))
    for tag, v in zip(("y", "gx", "gw"), out):
        res["conv3d-" + tag] = v

    pin = rng.randn(2, 3, 7, 9)
    pools = {"ib": dict(ws=(2, 3), ignore_border=True), "keep": dict(ws=(2, 3), ignore_border=False),
             "keep-stride": dict(ws=(3, 2), ignore_border=False, stride=(2, 1)),
             "gaps": dict(ws=(2, 2), ignore_border=False, stride=(3, 3)),
             "pad": dict(ws=(3, 3), ignore_border=True, pad=(1, 2), stride=(2, 2)),
             "pad-overlap": dict(ws=(3, 4), ignore_border=True, pad=(2, 1), stride=(1, 2))}
    for name, kw in pools.items():
        for mode in ("max", "sum", "average_inc_pad", "average_exc_pad"):
            y = pool.pool_2d(x, mode=mode, **kw)
            res[f"pool-{name}-{mode}-y"] = th.function([x], y)(pin)
            attempt(f"pool-{name}-{mode}-gx", th.function([x], th.grad((y ** 2).sum(), x)), pin)
        gx = th.grad((pool.pool_2d(x, mode="max", **kw) ** 2).sum(), x)
        res[f"pool-{name}-maxgg"] = th.function([x], th.grad((gx ** 2).sum(), x))(pin)
    y = pool.pool_3d(x5, (2, 2, 3), ignore_border=False, mode="average_exc_pad")
    res["pool3d"] = th.function([x5], [y, th.grad((y ** 2).sum(), x5)])(rng.randn(1, 2, 5, 5, 7))[1]
    res["same_size"] = th.function([x], pool.max_pool_2d_same_size(x, (2, 3)))(pin)

    xb, gm, bt, rm, rv = (T.dtensor4(n) for n in ("xb", "gm", "bt", "rm", "rv"))
    xbv = rng.randn(4, 3, 2, 5) * 2 + 1
    pv = [rng.randn(1, 3, 1, 1) for _ in range(3)] + [rng.rand(1, 3, 1, 1) + 0.5]
    outs = bn.batch_normalization_train(xb, gm, bt, "spatial", 1e-3, 0.3, rm, rv)
    grads = th.grad((outs[0] ** 2).sum(), [xb, gm, bt])
    for i, v in enumerate(th.function([xb, gm, bt, rm, rv], list(outs) + grads)(xbv, *pv)):
        res[f"bn-train-{i}"] = v
    test = bn.batch_normalization_test(xb, gm, bt, rm, rv, "spatial", 1e-3)
    res["bn-test"] = th.function([xb, gm, bt, rm, rv], test)(xbv, *pv)

    nin = rng.randn(2, 2, 8, 6)
    for mode, shp, step in (("valid", (2, 3), None), ("ignore_borders", (3, 2), (2, 2)),
                            ("half", (3, 3), (1, 1)), ("full", (2, 3), (1, 1)),
                            ("wrap_centered", (3, 3), (1, 1))):
        n = nb.images2neibs(x, shp, step, mode)
        res[f"neib-{mode}"] = th.function([x], n)(nin)
        attempt(f"neib-{mode}-g", lambda n=n: th.function([x], th.grad((n ** 2).sum(), x))(nin))

    v = T.dvector("v")
    av = np.concatenate([np.linspace(-6, 6, 49), [-40.0, 40.0]])  # 0 exactly, and saturation
    acts = {"relu": T.nnet.relu(v), "lrelu": T.nnet.relu(v, 0.1), "elu": T.nnet.elu(v),
            "elu2": T.nnet.elu(v, 0.5), "selu": T.nnet.selu(v), "softsign": T.nnet.softsign(v),
            "hard": T.nnet.hard_sigmoid(v), "ultra": T.nnet.ultra_fast_sigmoid(v)}
    for name, e in acts.items():
        res[f"act-{name}"] = th.function([v], e)(av)
        attempt(f"act-{name}-g", lambda e=e: th.function([v], th.grad(e.sum(), v))(av))
    m, b, yi = T.dmatrix("m"), T.dvector("b"), T.lvector("yi")
    mv, bv, yv = rng.randn(5, 4), rng.randn(4), np.array([0, 3, 1, 1, 2])
    res["softmax_with_bias"] = th.function([m, b], T.nnet.softmax_with_bias(m, b))(mv, bv)
    nll, _ = T.nnet.crossentropy_softmax_1hot(m, yi)
    res["xent"], res["xent-g"] = th.function([m, yi], [nll, th.grad(nll.sum(), m)])(mv, yv)
    o, tg = T.dvector("o"), T.dvector("tg")
    sbc = T.nnet.sigmoid_binary_crossentropy(o, tg)
    res["sbc"], res["sbc-g"] = th.function([o, tg], [sbc, th.grad(sbc.sum(), o)])(rng.randn(6) * 3,
                                                                                 rng.rand(6))
    np.savez(path, **res)
    print(len(res), "results")


if __name__ == "__main__":
    if sys.argv[1] == "compare":
        compare(sys.argv[2], sys.argv[3])
    else:
        main(sys.argv[1], sys.argv[2])
