"""Studies and attacks: learnability/CENT, robustness, SO-Enum/SO-Beam, bias, cross-domain."""
