/*
 * mac.c - libmpi's own copy of common/mac.c (SHA-256, HMAC-SHA256, getrandom, a
 *         constant-time compare, hex) for the TCP netmod's handshake (conn.c).
 *
 * Contract: compiled into libmpi.so so that the library needs nothing of the build
 *   tree's convenience libraries; libmpi.map keeps every loom_* symbol local, so a
 *   program or another library defining the same names is never bound to ours or
 *   ours to theirs.
 */
#include "../../common/mac.c"
