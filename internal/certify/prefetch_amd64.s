//go:build !purego

#include "textflag.h"

// func prefetchLine(p *uint64)
TEXT ·prefetchLine(SB), NOSPLIT, $0-8
	MOVQ p+0(FP), AX
	PREFETCHT0 (AX)
	RET
