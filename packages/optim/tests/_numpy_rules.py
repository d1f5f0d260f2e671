"""The published update rules in plain NumPy float64: the references the optimizers are tested against.

Each rule is ``rule(p, g, state, step, **hyper) -> new p``; ``state`` is a dict the rule
keeps its buffers in, ``step`` counts from 1. Written from the papers' / PyTorch docs'
pseudo-code, not from ember's code.
"""
import numpy as np


def sgd(p, g, s, t, lr, momentum=0, dampening=0, weight_decay=0, nesterov=False, maximize=False):
    g = -g if maximize else g
    g = g + weight_decay * p
    if momentum:
        s["b"] = g.copy() if t == 1 else momentum * s["b"] + (1 - dampening) * g
        g = g + momentum * s["b"] if nesterov else s["b"]
    return p - lr * g


def adam(p, g, s, t, lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, amsgrad=False, maximize=False,
         decoupled=False):
    b1, b2 = betas
    g = -g if maximize else g
    if decoupled:
        p = p * (1 - lr * weight_decay)
    else:
        g = g + weight_decay * p
    s["m"] = b1 * s.get("m", 0) + (1 - b1) * g
    s["v"] = b2 * s.get("v", 0) + (1 - b2) * g * g
    v = s["v"]
    if amsgrad:
        v = s["vmax"] = np.maximum(s.get("vmax", 0), v)
    m_hat = s["m"] / (1 - b1 ** t)
    return p - lr * m_hat / (np.sqrt(v) / np.sqrt(1 - b2 ** t) + eps)


def adamw(p, g, s, t, weight_decay=1e-2, **kw):
    return adam(p, g, s, t, weight_decay=weight_decay, decoupled=True, **kw)


def adamax(p, g, s, t, lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=0):
    b1, b2 = betas
    g = g + weight_decay * p
    s["m"] = b1 * s.get("m", 0) + (1 - b1) * g
    s["u"] = np.maximum(b2 * s.get("u", 0), np.abs(g) + eps)
    return p - lr / (1 - b1 ** t) * s["m"] / s["u"]


def nadam(p, g, s, t, lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, momentum_decay=4e-3,
          decoupled_weight_decay=False):
    b1, b2 = betas
    if decoupled_weight_decay:
        p = p * (1 - lr * weight_decay)
    else:
        g = g + weight_decay * p
    mu = b1 * (1 - 0.5 * 0.96 ** (t * momentum_decay))
    mu_next = b1 * (1 - 0.5 * 0.96 ** ((t + 1) * momentum_decay))
    # PyTorch keeps the running product of mu in a float32 tensor (and multiplies in float32).
    s["mu_prod"] = float(np.float32(s.get("mu_prod", 1.0)) * np.float32(mu))
    s["m"] = b1 * s.get("m", 0) + (1 - b1) * g
    s["v"] = b2 * s.get("v", 0) + (1 - b2) * g * g
    v_hat = s["v"] / (1 - b2 ** t)
    update = (1 - mu) * g / (1 - s["mu_prod"]) + mu_next * s["m"] / (1 - s["mu_prod"] * mu_next)
    return p - lr * update / (np.sqrt(v_hat) + eps)


def radam(p, g, s, t, lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, decoupled_weight_decay=False):
    b1, b2 = betas
    if decoupled_weight_decay:
        p = p * (1 - lr * weight_decay)
    else:
        g = g + weight_decay * p
    s["m"] = b1 * s.get("m", 0) + (1 - b1) * g
    s["v"] = b2 * s.get("v", 0) + (1 - b2) * g * g
    m_hat = s["m"] / (1 - b1 ** t)
    rho_inf = 2 / (1 - b2) - 1
    rho_t = rho_inf - 2 * t * b2 ** t / (1 - b2 ** t)
    if rho_t <= 5:
        return p - lr * m_hat
    rect = np.sqrt((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t))
    adaptive = np.sqrt(1 - b2 ** t) / (np.sqrt(s["v"]) + eps)
    return p - lr * m_hat * adaptive * rect


def adagrad(p, g, s, t, lr, lr_decay=0, weight_decay=0, initial_accumulator_value=0, eps=1e-10):
    g = g + weight_decay * p
    s["sum"] = s.get("sum", initial_accumulator_value) + g * g
    return p - lr / (1 + (t - 1) * lr_decay) * g / (np.sqrt(s["sum"]) + eps)


def adadelta(p, g, s, t, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0):
    g = g + weight_decay * p
    s["v"] = rho * s.get("v", 0) + (1 - rho) * g * g
    delta = np.sqrt(s.get("u", 0) + eps) / np.sqrt(s["v"] + eps) * g
    s["u"] = rho * s.get("u", 0) + (1 - rho) * delta * delta
    return p - lr * delta


def rmsprop(p, g, s, t, lr, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0, centered=False):
    g = g + weight_decay * p
    s["v"] = alpha * s.get("v", 0) + (1 - alpha) * g * g
    v = s["v"]
    if centered:
        s["g_avg"] = alpha * s.get("g_avg", 0) + (1 - alpha) * g
        v = v - s["g_avg"] ** 2
    if momentum:
        s["b"] = momentum * s.get("b", 0) + g / (np.sqrt(v) + eps)
        return p - lr * s["b"]
    return p - lr * g / (np.sqrt(v) + eps)


def rprop(p, g, s, t, lr, etas=(0.5, 1.2), step_sizes=(1e-6, 50)):
    prev = s.get("prev", np.zeros_like(g))
    eta = np.where(g * prev > 0, etas[1], np.where(g * prev < 0, etas[0], 1.0))
    s["step"] = np.clip(s.get("step", np.full_like(g, lr)) * eta, *step_sizes)
    g = np.where(g * prev < 0, 0.0, g)
    s["prev"] = g
    return p - np.sign(g) * s["step"]


def asgd(p, g, s, t, lr, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0):
    # eta and mu live in float32 tensors in PyTorch: their values are float32-rounded.
    eta, mu = s.get("eta", float(np.float32(lr))), s.get("mu", 1.0)
    g = g + weight_decay * p
    p = p * (1 - lambd * eta) - eta * g
    s["ax"] = p.copy() if mu == 1 else s["ax"] + mu * (p - s["ax"])
    s["eta"] = float(np.float32(lr / (1 + lambd * lr * t) ** alpha))
    s["mu"] = float(np.float32(1 / max(1, t - t0)))
    return p
