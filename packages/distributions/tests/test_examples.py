"""The update steps of PyTorch's reinforcement-learning examples (examples/reinforcement_learning:
reinforce.py and actor_critic.py) with ember: a Categorical policy's sampled actions, the
REINFORCE loss and the actor-critic loss, their gradients against the analytic
score-function gradients, and one SGD step moving the policy the right way. The networks are
linear layers written with tensors (ember-nn is a sibling, not a dependency)."""
import numpy as np

import ember_autograd
import ember_distributions as D
import ember_tensor as et

RNG = np.random.default_rng(7)
OBS, ACTIONS, STEPS = 4, 3, 6


def _softmax(z):
    e = np.exp(z - z.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def _discounted_normalised_returns(rewards, gamma=0.99):
    returns, running = [], 0.0
    for r in reversed(rewards):
        running = r + gamma * running
        returns.insert(0, running)
    returns = np.array(returns)
    return (returns - returns.mean()) / (returns.std(ddof=1) + np.finfo(np.float32).eps)


def test_reinforce_update_step():
    # Seeded: the sampled actions (and so the returns) must not depend on the tests before.
    et.manual_seed(0)
    W = et.tensor(RNG.standard_normal((OBS, ACTIONS)) * 0.1, dtype=et.float64, requires_grad=True)
    states = RNG.standard_normal((STEPS, OBS))
    log_probs, actions = [], []
    for state in states:
        m = D.Categorical(et.softmax(et.tensor(state, dtype=et.float64) @ W, dim=-1))
        action = m.sample()
        actions.append(int(action))
        log_probs.append(m.log_prob(action))
    # Rewards that differ unless every action is the same (then the normalised returns, the
    # loss and its gradient would all be zero and the step below would prove nothing).
    assert len(set(actions)) > 1
    rewards = [float(a) for a in actions]
    returns = _discounted_normalised_returns(rewards)
    policy_loss = et.stack([-lp * float(R) for lp, R in zip(log_probs, returns)]).sum()
    policy_loss.backward()
    # d(-R log softmax(xW)[a]) / dW = -R x^T (onehot(a) - softmax(xW)).
    probs = _softmax(states @ np.asarray(W.detach().tolist()))
    onehot = np.eye(ACTIONS)[actions]
    expected = -(states.T @ ((onehot - probs) * returns[:, None]))
    np.testing.assert_allclose(W.grad.tolist(), expected, rtol=1e-10, atol=1e-12)
    # One SGD step lowers the loss of these episodes (to first order, by lr |grad|^2).
    with ember_autograd.no_grad():
        W -= 1e-2 * W.grad
    new_log_probs = np.log(_softmax(states @ np.asarray(W.detach().tolist())))[np.arange(STEPS), actions]
    assert -(new_log_probs * returns).sum() < float(policy_loss)


def _smooth_l1(d):
    return np.where(np.abs(d) < 1, 0.5 * d * d, np.abs(d) - 0.5)


def test_actor_critic_update_step():
    et.manual_seed(1)  # the sampled actions must not depend on the tests before
    A = et.tensor(RNG.standard_normal((OBS, ACTIONS)) * 0.1, dtype=et.float64, requires_grad=True)
    V = et.tensor(RNG.standard_normal((OBS, 1)) * 0.1, dtype=et.float64, requires_grad=True)
    states = RNG.standard_normal((STEPS, OBS))
    saved = []
    for state in states:
        x = et.tensor(state, dtype=et.float64)
        m = D.Categorical(logits=x @ A)
        action = m.sample()
        saved.append((m.log_prob(action), (x @ V).squeeze(-1), int(action)))
    rewards = [float(a == 1) for _, _, a in saved]
    returns = _discounted_normalised_returns(rewards)
    policy_losses, value_losses = [], []
    for (log_prob, value, _), R in zip(saved, returns):
        advantage = float(R) - value.detach()
        policy_losses.append(-log_prob * advantage)
        diff = value - float(R)
        # F.smooth_l1_loss(value, R), written out (ember-nn is not a dependency).
        value_losses.append(et.where(diff.abs() < 1, 0.5 * diff * diff, diff.abs() - 0.5))
    loss = et.stack(policy_losses).sum() + et.stack(value_losses).sum()
    loss.backward()

    values = states @ np.asarray(V.detach().tolist())[:, 0]
    advantage = returns - values
    probs = _softmax(states @ np.asarray(A.detach().tolist()))
    onehot = np.eye(ACTIONS)[[a for _, _, a in saved]]
    np.testing.assert_allclose(A.grad.tolist(), -(states.T @ ((onehot - probs) * advantage[:, None])), rtol=1e-10,
                               atol=1e-12)
    d = values - returns
    np.testing.assert_allclose(np.asarray(V.grad.tolist())[:, 0], states.T @ np.clip(d, -1, 1), rtol=1e-10,
                               atol=1e-12)
    expected_loss = -(np.log(probs[np.arange(STEPS), onehot.argmax(1)]) * advantage).sum() + _smooth_l1(d).sum()
    assert abs(float(loss) - expected_loss) < 1e-10
