"""The paper's measures and the diversity metrics against hand-worked cases, brute force and the reference libraries."""
import math

import numpy as np
import pytest

from toymodels.hivemind import config as K
from toymodels.hivemind import similarity as Sm

RNG = np.random.default_rng(0)


def test_vendi_fixture_matches_package_readme():
    assert Sm.vendi_score(np.array([[1, .9, 0], [.9, 1, 0], [0, 0, 1]])) == pytest.approx(2.1573, abs=1e-4)


@pytest.mark.parametrize("n", [1, 3, 7])
def test_vendi_identical_is_one_orthogonal_is_n(n):
    assert Sm.vendi_score(np.ones((n, n))) == pytest.approx(1.0)
    assert Sm.vendi_score(np.eye(n)) == pytest.approx(float(n))


def test_vendi_against_entropy_of_eigenvalues_by_hand():
    # two blocks of identical items (sizes 2 and 3): K/n has eigenvalues 2/5 and 3/5
    K = np.zeros((5, 5))
    K[:2, :2] = 1
    K[2:, 2:] = 1
    p = np.array([0.4, 0.6])
    assert Sm.vendi_score(K) == pytest.approx(math.exp(-(p * np.log(p)).sum()))


def test_cosine_matrix_matches_sklearn():
    from sklearn.metrics.pairwise import cosine_similarity

    X = RNG.normal(size=(13, 7))
    np.testing.assert_allclose(Sm.cosine_matrix(X), cosine_similarity(X), atol=1e-12)


def test_mean_offdiag_is_the_explicit_double_loop():
    X = RNG.normal(size=(9, 5))
    S = Sm.cosine_matrix(X)
    brute = np.mean([S[i, j] for i in range(9) for j in range(9) if i < j])
    assert Sm.mean_offdiag(S) == pytest.approx(brute)
    assert math.isnan(Sm.mean_offdiag(S[:1, :1]))


def test_cluster_mixing_by_brute_force():
    X = RNG.normal(size=(12, 4))
    S = Sm.cosine_matrix(X)
    models = np.array(list("ABC") * 4)
    curve = Sm.cluster_mixing(S, models, max_n=50)
    assert len(curve) == 11
    for N in (1, 4, 11):
        brute = []
        for i in range(12):
            order = [j for j in np.argsort(-S[i], kind="stable") if j != i][:N]
            brute.append(len({models[j] for j in order}))
        assert curve[N - 1] == pytest.approx(np.mean(brute))
    assert curve[0] == 1 and curve[-1] == 3


@pytest.mark.parametrize("n,d", [(50, 8), (400, 16), (5, 16), (16, 16)])
def test_vendi_dual_form_equals_the_n_by_n_form(n, d):
    X = RNG.normal(size=(n, d))
    X[1] = X[0]  # a duplicate, so the kernel is rank-deficient too
    assert Sm.vendi_score_embeddings(X) == pytest.approx(Sm.vendi_score(Sm.cosine_matrix(X)), rel=1e-9)


def test_vendi_dual_form_is_fast_at_2000_responses():
    import time

    X = RNG.normal(size=(2000, 384)).astype(np.float32)
    t = time.process_time()
    Sm.vendi_score_embeddings(X)
    assert time.process_time() - t < 1.0  # the N x N form takes several seconds here


def test_cluster_mixing_with_exact_duplicates_drops_self_not_a_twin():
    X = np.repeat(RNG.normal(size=(4, 3)), 3, axis=0)  # every response has two exact twins
    models = np.array(list("ABC") * 4)
    curve = Sm.cluster_mixing(Sm.cosine_matrix(X), models, max_n=11)
    # the nearest two neighbours of each response are its twins, which come from the two other models
    assert curve[0] == 1 and curve[1] == pytest.approx(2.0)


def test_ttr_distinct_n_hand_counted():
    assert Sm.words("The cat, the DOG's toy!") == ["the", "cat", "the", "dog's", "toy"]
    assert Sm.ttr(Sm.words("the cat the dog")) == pytest.approx(3 / 4)
    texts = ["the cat sat", "the cat ran"]
    # unigrams: the,cat,sat,the,cat,ran -> 4 unique / 6 ; bigrams: the cat, cat sat, the cat, cat ran -> 3 / 4
    assert Sm.distinct_n(texts, 1) == pytest.approx(4 / 6)
    assert Sm.distinct_n(texts, 2) == pytest.approx(3 / 4)
    assert Sm.distinct_n(texts, 3) == pytest.approx(2 / 2)
    assert math.isnan(Sm.distinct_n(["one"], 2))


def test_mattr_by_hand_and_fallback():
    tok = "a b a c a".split()
    # windows of 3: (a b a)=2/3, (b a c)=3/3, (a c a)=2/3
    assert Sm.mattr(tok, 3) == pytest.approx((2 / 3 + 1 + 2 / 3) / 3)
    assert Sm.mattr(tok, 10) == pytest.approx(Sm.ttr(tok))
    long = [str(x) for x in RNG.integers(0, 20, size=200)]
    brute = np.mean([len(set(long[i:i + 25])) / 25 for i in range(200 - 25 + 1)])
    assert Sm.mattr(long, 25) == pytest.approx(brute)


def test_compression_ratio_orders_repetition():
    rep = Sm.compression_ratio(["the same sentence over and over again"] * 20)
    div = Sm.compression_ratio([f"sentence {i} about {w}" for i, w in enumerate("apples rivers quarks jazz".split())])
    assert rep > 5 > div


def test_self_bleu_identical_100_disjoint_0():
    assert Sm.self_bleu(["a cat sat on the mat"] * 4) == pytest.approx([100.0] * 4)
    assert Sm.self_bleu(["the cat sat", "dogs run fast", "birds fly high"]) == pytest.approx([0.0] * 3)
    assert all(math.isnan(x) for x in Sm.self_bleu(["only one"]))


def test_fast_self_bleu_equals_sacrebleu_per_hypothesis_loop():
    words = "time river weaver moment current flows carries memory we the a of is and".split()
    texts = [" ".join(RNG.choice(words, size=RNG.integers(3, 15))) for _ in range(30)]
    texts += [texts[0], texts[0] + " again"]
    np.testing.assert_allclose(Sm.self_bleu(texts), Sm.self_bleu_naive(texts), atol=1e-9)


def test_sacrebleu_pinned():
    import sacrebleu

    assert sacrebleu.__version__ == K.SACREBLEU_VERSION


@pytest.mark.parametrize("shape", [(2000, 384), (30, 384), (5, 3), (2, 4)])
def test_pca_2d_equals_sklearn_full_svd_up_to_sign(shape):
    """The fast PCA (top two eigenvectors of the d x d scatter matrix) against scikit-learn's full SVD: the same
    scores to 1e-6 once each axis's sign is matched (PCA's signs are arbitrary)."""
    from sklearn.decomposition import PCA

    X = np.random.default_rng(shape[0]).normal(size=shape)
    X[:, 0] *= 3.0  # distinct leading variances, so the axes are well defined
    X[:, 1] *= 2.0
    ref = PCA(n_components=2, svd_solver="full").fit_transform(X)
    got = Sm.pca_2d(X)
    assert got.shape == ref.shape
    for k in range(2):
        sign = 1.0 if ref[:, k] @ got[:, k] >= 0 else -1.0
        np.testing.assert_allclose(sign * got[:, k], ref[:, k], atol=1e-6)
