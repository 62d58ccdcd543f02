# Normalizes a PTX file of scripts/ptx-snapshot.sh for comparing code alone
# (`sed -E -f scripts/ptx-normalize.sed FILE`: the patterns are extended):
# drops attn-translate's `//` launch-fact lines and writes the tier suffix
# of kernel symbols (_wmma, _mma) as _TIER.
/^\/\//d
s/_(wmma|mma)(_param_|\(| |$|,|;|\))/_TIER\2/g
