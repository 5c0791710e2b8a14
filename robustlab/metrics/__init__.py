"""Pure metric functions (learnability ATE, log-AUC, correlations, CoV, gamma, bagging, MT scoring)."""
