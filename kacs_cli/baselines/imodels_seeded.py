"""imodels' FIGSRegressor with its one source of chance seeded: FIGS grows its trees from
scikit-learn stumps built without a random_state, so they draw their feature order from
numpy's global generator and two fits with one seed differed in the last bits (up to 7e-16 on a
small case). Here that generator is seeded from `random_state` for the fit and restored after.

Imported only where the imodels extra is installed (the registry imports an entry's class
when it resolves the method).
"""

from __future__ import annotations

import numpy as np
from imodels import FIGSRegressor


class SeededFIGSRegressor(FIGSRegressor):
    """FIGSRegressor whose fit depends on its arguments and random_state only."""

    def fit(self, X, y=None, *args, **kwargs):
        saved = np.random.get_state()
        np.random.seed(0 if self.random_state is None else int(self.random_state) % 2**32)
        try:
            return super().fit(X, y, *args, **kwargs)
        finally:
            np.random.set_state(saved)
