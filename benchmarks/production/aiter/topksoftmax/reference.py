"""Reference for topksoftmax: p = softmax(gating) over 128 experts; the 8 largest p (ties to the lower
expert id) and their ids, renormalised to sum 1. Padding rows past the token count stay zero."""
import numpy as np


def reference(inputs, scalars):
    args = scalars[0]
    k = args["topk"]
    g = inputs["gating"].astype(np.float64)
    p = np.exp(g - g.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    ids = np.lexsort((np.broadcast_to(np.arange(p.shape[1]), p.shape), -p), axis=1)[:, :k]
    w = np.take_along_axis(p, ids, axis=1)
    if args["renormalize"]:
        w /= w.sum(axis=1, keepdims=True)
    weights, topk_ids = inputs["topk_weights"].copy(), inputs["topk_ids"].copy()
    weights[:len(w)], topk_ids[:len(w)] = w, ids
    return {"topk_weights": weights, "topk_ids": topk_ids}
