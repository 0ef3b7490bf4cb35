"""The clip filter's QP solved directly with banded Cholesky factors (docs/dynamics.md
section 6c), instead of OSQP's ADMM iterations.

The QP of :func:`animik.dynamics.correct._qp_step` is

    min  1/2 x'Rx + rho/2 |s|^2   s.t.  Gx - s <= b,  s >= 0,

or, with the best slack ``s = max(0, Gx - b)`` put in, the unconstrained, convex, piecewise
quadratic, once-differentiable problem ``min f(x) = 1/2 x'Rx + rho/2 |max(0, Gx - b)|^2``.

Structure: the unknowns are ordered frame by frame; ``R`` couples the frames of two
Savitzky-Golay windows (``D1'D1``) and each row of ``G`` lives on one window's columns (it
combines the ``D0 / D1 / D2`` rows of one frame). Every linear system below is therefore
``(R + G' diag(theta) G) dx = r``, banded with the half-bandwidth of ``R``: it is assembled from
each row's dense span (:class:`BandRows`, a numba loop along the band's diagonals) and
factored by LAPACK's banded Cholesky, in time linear in the clip's length.

Two methods, both converging to the exact minimiser (not an ADMM approximation):

1. Finite Newton (Mangasarian's method for squared-hinge problems): on the set ``A`` of violated
   rows ``f`` is a quadratic, minimised by ``(R + rho G_A'G_A) x = rho G_A' b_A``; an exact line
   search on the piecewise quadratic ``f(x + t d)`` keeps it descending, and it stops when the
   violated set no longer changes (then ``x`` is optimal). Few steps when few rows change.
2. A primal-dual interior-point method (Mehrotra predictor-corrector) on the slack form, used
   when Newton has not settled within a few steps: with many strongly weighted rows hovering at
   their bounds Newton's line search takes short steps, while the interior-point method needs
   ~15-20 steps whatever the active set.
"""

from __future__ import annotations

import numba as nb
import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp

from ._blas_threads import one_blas_thread


@nb.njit(cache=True, nogil=True)
def _gram_band_t(lo, rows, theta, abt):
    """``abt += (G' diag(theta) G)`` in transposed lower banded storage, ``abt[j, i - j] =
    H[i, j]`` (``(n, u + 1)``, C order: ``abt.T`` is LAPACK's Fortran-ordered lower band, so
    the factorisation reads it without a copy). Column by column, the inner loop along
    ``abt``'s contiguous rows."""
    m, L = rows.shape
    nd = abt.shape[1]
    tg = np.empty(L)
    for i in range(m):
        th = theta[i]
        if th == 0.0:
            continue
        o = lo[i]
        g = rows[i]
        for c in range(L):
            tg[c] = th * g[c]
        for c in range(L):
            gc = g[c]
            if gc == 0.0:
                continue
            out = abt[o + c]
            for d in range(min(L - c, nd)):
                out[d] += tg[c + d] * gc


@nb.njit(cache=True, nogil=True)
def _band_matvec(lo, rows, x, out):
    """``out = G x`` for the dense-span rows of :class:`BandRows`."""
    m, L = rows.shape
    for i in range(m):
        o = lo[i]
        acc = 0.0
        for c in range(L):
            acc += rows[i, c] * x[o + c]
        out[i] = acc


@nb.njit(cache=True, nogil=True)
def _band_rmatvec(lo, rows, y, out):
    """``out = G' y`` for the dense-span rows of :class:`BandRows`."""
    m, L = rows.shape
    out[:] = 0.0
    for i in range(m):
        o = lo[i]
        yi = y[i]
        if yi == 0.0:
            continue
        for c in range(L):
            out[o + c] += yi * rows[i, c]


class _Transposed:
    """``G'`` of a :class:`BandRows` as an operator: ``G.T @ y``."""

    def __init__(self, g: BandRows):
        self.g = g

    def __matmul__(self, y: np.ndarray) -> np.ndarray:
        out = np.empty(self.g.n)
        _band_rmatvec(self.g.lo, self.g.rows, np.ascontiguousarray(y, dtype=float), out)
        return out


class BandRows:
    """The rows of ``G`` as dense spans: row ``i`` is ``rows[i]`` placed at columns
    ``lo[i] .. lo[i] + L - 1`` of an ``(m, n)`` matrix (explicit zeros allowed). The clip
    filter builds its rows this way (a frame's rows live on its Savitzky-Golay window)."""

    def __init__(self, lo: np.ndarray, rows: np.ndarray, n: int):
        self.lo = np.ascontiguousarray(lo, dtype=np.int64)
        self.rows = np.ascontiguousarray(rows, dtype=float)
        m, L = self.rows.shape
        if m and (self.lo.min() < 0 or self.lo.max() + L > n):
            raise ValueError(f"band rows of width {L} must lie within {n} columns")
        self.n, self.L, self.m = n, L, m
        self.shape = (m, n)

    @property
    def csr(self) -> sp.csr_matrix:
        """The rows as a scipy CSR matrix (explicit zeros kept)."""
        m, L = self.rows.shape
        cols = (self.lo[:, None] + np.arange(L)[None, :]).ravel()
        return sp.csr_matrix((self.rows.ravel(), cols, np.arange(0, m * L + 1, L)),
                             shape=(m, self.n))

    def __matmul__(self, x: np.ndarray) -> np.ndarray:
        """``G x`` (a numba loop over the dense spans: no index arrays, unlike CSR)."""
        out = np.empty(self.m)
        _band_matvec(self.lo, self.rows, np.ascontiguousarray(x, dtype=float), out)
        return out

    @property
    def T(self) -> _Transposed:
        """``G'`` as an operator (``G.T @ y``)."""
        return _Transposed(self)

    def sq_norms(self) -> np.ndarray:
        """``|g_i|^2`` of every row ``(m,)``."""
        return np.einsum("ij,ij->i", self.rows, self.rows)

    @classmethod
    def from_sparse(cls, G: sp.spmatrix, n: int, align: int = 1) -> BandRows:
        """Each row of ``G`` from its first nonzero column (rounded down to a multiple of
        ``align``) over the widest such span."""
        G = sp.csr_matrix(G)
        G.sum_duplicates()  # canonical: sorted column indices, so a row's first is its lowest
        m = G.shape[0]
        nnz = np.diff(G.indptr)
        row = np.repeat(np.arange(m), nnz)
        lo = np.zeros(m, dtype=np.int64)
        lo[nnz > 0] = G.indices[G.indptr[:-1][nnz > 0]]
        lo -= lo % align
        L = min(int((G.indices - lo[row]).max()) + 1 if G.nnz else 1, n)
        lo = np.minimum(lo, n - L)
        rows = np.zeros((m, L))
        rows[row, G.indices - lo[row]] = G.data
        return cls(lo, rows, n)

    def gram_banded(self, theta: np.ndarray, u: int) -> np.ndarray:
        """``G' diag(theta) G`` in lower banded storage ``(u + 1, n)`` (``u >= L - 1``)."""
        abt = np.zeros((self.n, u + 1))
        self.gram_into(theta, abt)
        return abt.T

    def gram_into(self, theta: np.ndarray, abt: np.ndarray) -> None:
        """``abt += G' diag(theta) G`` in transposed lower banded storage ``(n, u + 1)``
        (``abt[j, i - j] = H[i, j]``; :func:`_gram_band_t`)."""
        _gram_band_t(self.lo, self.rows, np.ascontiguousarray(theta, dtype=float), abt)


@nb.njit(cache=True, nogil=True)
def _frame_matvec(lo_f, wts, row_frame, coef, x, out):
    """``out = G x`` for :class:`FrameRows`: each frame's window contracted with its weights
    once (``Z (F, D, k)``), then every row is a dot product of length ``D k``."""
    F, D, nw = wts.shape
    m, _, k = coef.shape
    Z = np.empty((F, D, k))
    for f in range(F):
        o = lo_f[f]
        for d in range(D):
            for j in range(k):
                acc = 0.0
                for s in range(nw):
                    acc += wts[f, d, s] * x[o + s * k + j]
                Z[f, d, j] = acc
    for i in range(m):
        f = row_frame[i]
        acc = 0.0
        for d in range(D):
            for j in range(k):
                acc += coef[i, d, j] * Z[f, d, j]
        out[i] = acc


@nb.njit(cache=True, nogil=True)
def _frame_rmatvec(lo_f, wts, row_frame, coef, y, out):
    """``out = G' y`` for :class:`FrameRows`: the rows' coefficients summed per frame
    (``Y (F, D, k)``), then spread over each frame's window once."""
    F, D, nw = wts.shape
    m, _, k = coef.shape
    Y = np.zeros((F, D, k))
    for i in range(m):
        yi = y[i]
        if yi == 0.0:
            continue
        f = row_frame[i]
        for d in range(D):
            for j in range(k):
                Y[f, d, j] += yi * coef[i, d, j]
    out[:] = 0.0
    for f in range(F):
        o = lo_f[f]
        for s in range(nw):
            for j in range(k):
                acc = 0.0
                for d in range(D):
                    acc += wts[f, d, s] * Y[f, d, j]
                out[o + s * k + j] += acc


@nb.njit(cache=True, nogil=True)
def _frame_expand(wts, row_frame, coef, rows):
    """The dense spans ``rows (m, n_w k)`` of :class:`FrameRows`' factored rows."""
    m, D, k = coef.shape
    nw = wts.shape[2]
    for i in range(m):
        f = row_frame[i]
        for s in range(nw):
            for j in range(k):
                acc = 0.0
                for d in range(D):
                    acc += wts[f, d, s] * coef[i, d, j]
                rows[i, s * k + j] = acc


class FrameRows:
    """Rows with the clip filter's structure, kept factored: row ``i`` belongs to a frame whose
    window starts at unknown ``lo`` and spans ``n_w`` frames of ``k`` unknowns, and its entry
    at ``(s, j)`` of the window is ``sum_d wts[f, d, s] coef[i, d, j]`` (the frame's
    Savitzky-Golay weights of derivative ``d`` times the row's coefficients of that
    derivative's mode ``j``). ``G x`` and ``G' y`` then cost half the dense spans'
    (:class:`BandRows`): the window is contracted once per frame, not per row. ``G' diag(theta)
    G`` is assembled from the dense spans, expanded once (a frame's block through the
    factored form, ``sum_{d,e} (w_d w_e') (x) (C_d' Theta C_e)``, is no less work at the
    filter's ~13 rows a frame, and its band writes do not vectorise).

    Args:
        lo: ``(F,)`` first unknown of each frame's window.
        wts: ``(F, D, n_w)`` each frame's window weights.
        row_frame: ``(m,)`` each row's frame (index into ``lo`` / ``wts``).
        coef: ``(m, D, k)`` each row's coefficients.
        n: number of unknowns.
    """

    def __init__(self, lo: np.ndarray, wts: np.ndarray, row_frame: np.ndarray,
                 coef: np.ndarray, n: int):
        row_frame = np.asarray(row_frame, dtype=np.int64)
        used, inv = np.unique(row_frame, return_inverse=True)  # only the frames with rows
        self.lo = np.ascontiguousarray(np.asarray(lo, dtype=np.int64)[used])
        self.wts = np.ascontiguousarray(np.asarray(wts, dtype=float)[used])
        self.row_frame = np.ascontiguousarray(inv.reshape(-1), dtype=np.int64)
        self.coef = np.ascontiguousarray(coef, dtype=float)
        F, D, nw = self.wts.shape
        m, D2, k = self.coef.shape
        if D2 != D or len(self.row_frame) != m:
            raise ValueError(f"coef {self.coef.shape} does not match {m} rows of {D} weights")
        self.k, self.n, self.m, self.L = k, n, m, nw * k
        self.shape = (m, n)
        if F and (self.lo.min() < 0 or self.lo.max() + self.L > n):
            raise ValueError(f"frame windows of width {self.L} must lie within {n} columns")
        self._dense: BandRows | None = None

    def band_rows(self) -> BandRows:
        """The same rows as dense spans (expanded once, then kept)."""
        if self._dense is None:
            rows = np.empty((self.m, self.L))
            _frame_expand(self.wts, self.row_frame, self.coef, rows)
            self._dense = BandRows(self.lo[self.row_frame], rows, self.n)
        return self._dense

    @property
    def csr(self) -> sp.csr_matrix:
        return self.band_rows().csr

    def __matmul__(self, x: np.ndarray) -> np.ndarray:
        out = np.empty(self.m)
        _frame_matvec(self.lo, self.wts, self.row_frame, self.coef,
                      np.ascontiguousarray(x, dtype=float), out)
        return out

    @property
    def T(self) -> _FrameTransposed:
        return _FrameTransposed(self)

    def sq_norms(self) -> np.ndarray:
        """``|g_i|^2 = sum_{d,e} (w_d . w_e) (c_d . c_e)`` of every row ``(m,)``."""
        ww = np.einsum("fds,fes->fde", self.wts, self.wts)[self.row_frame]
        return np.einsum("ide,idj,iej->i", ww, self.coef, self.coef)

    def gram_banded(self, theta: np.ndarray, u: int) -> np.ndarray:
        """``G' diag(theta) G`` in lower banded storage ``(u + 1, n)`` (``u >= L - 1``)."""
        return self.band_rows().gram_banded(theta, u)

    def gram_into(self, theta: np.ndarray, abt: np.ndarray) -> None:
        """``abt += G' diag(theta) G`` in transposed lower banded storage (see
        :meth:`BandRows.gram_into`)."""
        self.band_rows().gram_into(theta, abt)


class _FrameTransposed:
    """``G'`` of a :class:`FrameRows` as an operator: ``G.T @ y``."""

    def __init__(self, g: FrameRows):
        self.g = g

    def __matmul__(self, y: np.ndarray) -> np.ndarray:
        g = self.g
        out = np.empty(g.n)
        _frame_rmatvec(g.lo, g.wts, g.row_frame, g.coef, np.ascontiguousarray(y, dtype=float),
                       out)
        return out


def _banded_lower(H: sp.spmatrix, u: int) -> np.ndarray:
    """Lower banded storage ``ab[i - j, j] = H[i, j]`` (``i >= j``) of a symmetric matrix."""
    C = sp.csr_matrix(H).tocoo()  # CSR: duplicates summed, so plain assignment below
    m = C.row >= C.col
    ab = np.zeros((u + 1, H.shape[0]))
    ab[C.row[m] - C.col[m], C.col[m]] = C.data[m]
    return ab


def _line_search(Rx: np.ndarray, Rd: np.ndarray, d: np.ndarray, r: np.ndarray, g: np.ndarray,
                 rho: float) -> float:
    """The exact minimiser ``t`` in ``[0, 1]`` of ``phi(t) = f(x + t d)`` with ``r = Gx - b``
    and ``g = Gd``. ``phi'(t) = d'Rx + t d'Rd + rho sum_{r_i + t g_i > 0} g_i (r_i + t g_i)`` is
    increasing and piecewise linear; its pieces change where a row crosses zero, so the root is
    found by walking the sorted crossings."""
    a, c = float(d @ Rx), float(d @ Rd)
    on = (r > 0) | ((r == 0) & (g > 0))  # the rows active just after t = 0
    s1 = a + rho * float(g[on] @ r[on])  # phi'(t) = s1 + t s2 on the current piece
    s2 = c + rho * float(g[on] @ g[on])
    nz = g != 0
    tb = np.full(r.shape, np.inf)
    tb[nz] = -r[nz] / g[nz]
    cross = np.flatnonzero((tb > 0) & (tb < 1.0))
    cross = cross[np.argsort(tb[cross])]
    # crossing row i switches on if g_i > 0 (it was off), off if g_i < 0 (it was on)
    sign = np.where(g[cross] > 0, 1.0, -1.0)
    S1 = np.concatenate([[s1], s1 + np.cumsum(sign * rho * g[cross] * r[cross])])
    S2 = np.concatenate([[s2], s2 + np.cumsum(sign * rho * g[cross] ** 2)])
    ends = np.concatenate([tb[cross], [1.0]])
    starts = np.concatenate([[0.0], tb[cross]])
    hit = np.flatnonzero(S1 + ends * S2 >= 0)  # the first piece whose end has phi' >= 0
    if not len(hit):
        return 1.0
    j = int(hit[0])
    if S2[j] <= 0:
        return float(starts[j])
    return float(np.clip(-S1[j] / S2[j], starts[j], ends[j]))


def _bandwidth(R: sp.spmatrix) -> int:
    C = R.tocoo()
    return int(np.abs(C.row - C.col).max()) if C.nnz else 0


def _banded_factor(abt: np.ndarray) -> np.ndarray:
    """LAPACK's banded Cholesky (``dpbtrf``) of the transposed lower band ``abt (n, u + 1)``,
    in place (``abt.T`` is the Fortran-ordered band LAPACK reads: no copy)."""
    cb, info = _PBTRF(abt.T, lower=1, overwrite_ab=1)
    if info != 0:
        raise np.linalg.LinAlgError(f"banded Cholesky: leading minor {info} is not positive "
                                    "definite")
    return cb


def _banded_solve(cb: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    x, info = _PBTRS(cb, rhs, lower=1)
    if info != 0:
        raise ValueError(f"banded solve: illegal argument {-info}")
    return x


_PBTRF, _PBTRS = sla.get_lapack_funcs(("pbtrf", "pbtrs"), dtype=np.float64)


@one_blas_thread
def solve_penalty_qp(R: sp.spmatrix, G: sp.spmatrix | BandRows | FrameRows, b: np.ndarray, rho: float,
                     align: int = 1, newton_steps: int = 6, tol: float = 1e-8,
                     max_iter: int = 60, drop: float = 1e-5, correctors: int = 2,
                     start_dual: float = 3e-3) -> tuple[np.ndarray, str, int, bool]:
    """Minimise ``1/2 x'Rx + rho/2 |max(0, Gx - b)|^2`` (module docstring).

    Args:
        R: ``(N, N)`` symmetric positive definite, banded in the unknowns' order.
        G: ``(m, N)`` rows (sparse, :class:`BandRows` or :class:`FrameRows`), each nonzero on
            a span of columns.
        b: ``(m,)`` right-hand sides.
        rho: penalty weight (> 0).
        align: a sparse ``G``'s rows are stored from a multiple of ``align`` (a frame's
            modes).
        newton_steps: finite Newton steps before the interior-point method takes over (it
            also does after the second step that is not a full one).
        tol: the interior-point method's relative tolerance (residuals and duality gap).
        max_iter: interior-point steps at most.
        drop: interior-point rows whose weight in the Newton matrix is below ``drop`` times
            ``R``'s smallest diagonal entry are left out of its factor (not of the residuals).
        correctors: Gondzio's centrality correctors per interior-point step at most (each a
            pair of solves with the step's factor, no new factor; 0: plain Mehrotra).
        start_dual: the interior point's starting multipliers (section 6f: 3e-3 with the
            correctors takes 25 % fewer steps than 0.1 without on the body95 retargets).

    Returns:
        ``(x, method, steps, converged)``; ``method`` is ``"newton"`` or ``"ipm"``.
    """
    N = R.shape[0]
    R = sp.csr_matrix(R)
    blocks = G if isinstance(G, (BandRows, FrameRows)) else BandRows.from_sparse(G, N, align)
    G = blocks
    b = np.asarray(b, dtype=float)
    u = max(_bandwidth(R), blocks.L - 1)  # the band of R + G'G
    R_abt = np.ascontiguousarray(_banded_lower(R, u).T)  # transposed: (N, u + 1)
    work = np.empty_like(R_abt)  # one buffer: a factor is used only until the next is made

    def factor_solve(theta: np.ndarray):
        np.copyto(work, R_abt)
        blocks.gram_into(theta, work)
        cb = _banded_factor(work)
        return lambda rhs: _banded_solve(cb, rhs)

    GT = G.T
    # 1. finite Newton from x = 0
    x = np.zeros(N)
    r = -b
    active = r > 0
    short = 0
    for it in range(1, newton_steps + 1):
        x_new = factor_solve(rho * active)(rho * (GT @ np.where(active, b, 0.0)))
        r_new = G @ x_new - b
        if np.array_equal(r_new > 0, active):  # consistent: the exact minimiser
            return x_new, "newton", it, True
        # the full step when it decreases f enough (Armijo), else the exact line minimum
        d = x_new - x
        Rx, Rd = R @ x, R @ d
        f = 0.5 * float(x @ Rx) + 0.5 * rho * float(np.maximum(r, 0.0) @ np.maximum(r, 0.0))
        Rx_new = Rx + Rd
        rp = np.maximum(r_new, 0.0)
        f_new = 0.5 * float(x_new @ Rx_new) + 0.5 * rho * float(rp @ rp)
        slope = float(d @ Rx) + rho * float((r_new - r) @ np.maximum(r, 0.0))
        if f_new <= f + 1e-4 * slope:
            x, r = x_new, r_new
        else:
            short += 1
            if short >= 2:  # heavy rows hovering at their bounds: Newton would crawl
                break
            t = _line_search(Rx, Rd, d, r, r_new - r, rho)
            x = x + t * d
            r = G @ x - b
        active = r > 0
    # 2. primal-dual interior point on  Gx - s + w = b,  w, s >= 0,  multipliers lam, nu
    m = G.shape[0]
    x = np.zeros(N)
    # a primal-feasible start (Gx - s + w = b at x = 0) with small multipliers: 3e-3 with the
    # correctors, 25 % fewer steps than 0.1 without on the body95 retargets (section 6f)
    s = np.maximum(-b, 0.0) + 0.1
    w = np.maximum(b, 0.0) + 0.1
    lam = np.full(m, start_dual)
    nu = np.full(m, start_dual)
    scale = 1.0 + np.abs(b).max(initial=0.0)
    g2 = blocks.sq_norms()  # |g_i|^2
    r_min = float(R.diagonal().min())
    for it in range(1, max_iter + 1):
        rx = R @ x + GT @ lam
        rs = rho * s - lam - nu
        rp = G @ x - s + w - b
        mu = (w @ lam + s @ nu) / (2 * m)
        if (mu < tol and np.abs(rp).max() < tol * scale
                and max(np.abs(rx).max(), np.abs(rs).max()) < tol * (1.0 + np.abs(lam).max())):
            return x, "ipm", it, True
        ds = rho + nu / s
        e = 1.0 / ds + w / lam
        theta = 1.0 / e
        # rows far from their bounds weigh ~0 (lam -> 0, w large): leaving out those below
        # drop * (R's smallest diagonal) changes the factor by a negligible amount; the
        # residuals stay exact, so the iterates still converge to the exact solution
        theta[theta * g2 < drop * r_min] = 0.0
        solve = factor_solve(theta)

        pt = (w, s, lam, nu, ds, e, rx, rs, rp)
        dx, d_s, dw, dl, dn = _kkt_step(solve, G, GT, pt, w * lam, s * nu)
        ap, ad = _steps(s, w, lam, nu, d_s, dw, dl, dn)
        mu_aff = ((w + ap * dw) @ (lam + ad * dl) + (s + ap * d_s) @ (nu + ad * dn)) / (2 * m)
        sigma = (mu_aff / mu) ** 3
        r_wl = w * lam + dw * dl - sigma * mu
        r_sn = s * nu + d_s * dn - sigma * mu
        step = _kkt_step(solve, G, GT, pt, r_wl, r_sn)
        ap, ad = _steps(s, w, lam, nu, *step[1:])
        step, ap, ad = _centrality_correctors(solve, G, GT, pt, step, ap, ad, r_wl, r_sn,
                                              sigma * mu, correctors)
        dx, d_s, dw, dl, dn = step
        ap, ad = 0.99 * ap, 0.99 * ad
        x, s, w = x + ap * dx, s + ap * d_s, w + ap * dw
        lam, nu = lam + ad * dl, nu + ad * dn
    return x, "ipm", max_iter, False


def _steps(s, w, lam, nu, d_s, dw, dl, dn) -> tuple[float, float]:
    """The largest primal and dual step lengths in ``[0, 1]`` that keep ``s, w`` and ``lam,
    nu`` non-negative (:func:`_max_step` of each pair, in one compiled pass)."""
    return _steps_kernel(s, w, lam, nu, d_s, dw, dl, dn)


@nb.njit(cache=True, nogil=True)
def _steps_kernel(s, w, lam, nu, d_s, dw, dl, dn):
    ap = 1.0
    ad = 1.0
    for i in range(s.shape[0]):
        if d_s[i] < 0:
            ap = min(ap, -s[i] / d_s[i])
        if dw[i] < 0:
            ap = min(ap, -w[i] / dw[i])
        if dl[i] < 0:
            ad = min(ad, -lam[i] / dl[i])
        if dn[i] < 0:
            ad = min(ad, -nu[i] / dn[i])
    return ap, ad


def _centrality_correctors(solve, G, GT, pt, step, ap, ad, r_wl, r_sn, target, n,
                           grow=0.3, lo=0.1, hi=10.0, gain=0.1):
    """Gondzio's multiple centrality correctors (Gondzio 1996, "Multiple centrality
    corrections in a primal-dual method for linear programming"): aim at steps ``grow``
    longer than the predictor-corrector's, push the complementarity products of that trial
    point into ``[lo, hi] * sigma mu`` by a further direction from the same factor, and keep
    it while it lengthens both steps by at least ``gain * grow``. Each costs two banded
    solves and four products with ``G``, not a factorisation: fewer, better-centred steps.

    Returns:
        ``(step, ap, ad)``: the direction ``(dx, ds, dw, dlam, dnu)`` and its step lengths.
    """
    w, s, lam, nu = pt[0], pt[1], pt[2], pt[3]
    for _ in range(n):
        if ap >= 1.0 and ad >= 1.0:
            break
        at, bt = min(1.0, ap + grow), min(1.0, ad + grow)
        dx, d_s, dw, dl, dn = step
        corr = []
        for v in ((w + at * dw) * (lam + bt * dl), (s + at * d_s) * (nu + bt * dn)):
            # toward the box around the target; products far above it only part of the way
            corr.append(np.maximum(np.clip(v, lo * target, hi * target) - v, -hi * target))
        new = _kkt_step(solve, G, GT, pt, r_wl - corr[0], r_sn - corr[1])
        ap2, ad2 = _steps(s, w, lam, nu, *new[1:])
        if ap2 >= ap + gain * grow and ad2 >= ad + gain * grow:
            step, ap, ad = new, ap2, ad2
            r_wl, r_sn = r_wl - corr[0], r_sn - corr[1]
            continue
        if min(ap2, ad2) > min(ap, ad):
            step, ap, ad = new, ap2, ad2
        break
    return step, ap, ad


def _kkt_step(solve, G, GT, pt, r_wl: np.ndarray, r_sn: np.ndarray) -> tuple[np.ndarray, ...]:
    """One Newton direction of the interior-point KKT system with ``s, w, nu`` eliminated row
    by row (they enter diagonally): ``(R + G' diag(1/e) G) dx = ...`` by ``solve``, then the
    rest. ``r_wl``, ``r_sn``: the complementarity residuals of ``w lam`` and ``s nu``."""
    w, s, lam, nu, ds, e, rx, rs, rp = pt
    a = rs + r_sn / s
    c = rp - r_wl / lam + a / ds
    dx = solve(-rx - GT @ (c / e))
    dl = (G @ dx + c) / e
    d_s = (dl - a) / ds
    return dx, d_s, (-r_wl - w * dl) / lam, dl, (-r_sn - nu * d_s) / s


def _max_step(v: np.ndarray, dv: np.ndarray) -> float:
    """The largest ``a`` in ``[0, 1]`` with ``v + a dv >= 0``."""
    neg = dv < 0
    return min(1.0, float(np.min(-v[neg] / dv[neg]))) if neg.any() else 1.0
