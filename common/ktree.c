/* ktree.c - k-ary tree arithmetic over nodes 0..n-1 rooted at 0.
 *
 * Contract: see ktree.h.  Node i's children are k*i+1 .. k*i+k; a subtree
 * rooted at r therefore covers, at each depth below r, one contiguous range
 * of node numbers, which is what ktree_in_subtree walks.  k = 1 is a chain.
 * Arithmetic is done in long long so k*i+k cannot overflow for int inputs.
 */
#include "ktree.h"

static int valid(int k, int n, int i)
{
    return k >= 1 && n >= 1 && i >= 0 && i < n;
}

int ktree_parent(int k, int n, int i)
{
    if (!valid(k, n, i) || i == 0)
        return -1;
    return (i - 1) / k;
}

int ktree_children(int k, int n, int i, int *children)
{
    if (!valid(k, n, i))
        return 0;
    int c = 0;
    for (long long j = (long long)k * i + 1; j <= (long long)k * i + k && j < n; j++)
        children[c++] = (int)j;
    return c;
}

int ktree_depth(int k, int n, int i)
{
    if (!valid(k, n, i))
        return -1;
    int d = 0;
    while (i > 0) {
        i = (i - 1) / k;
        d++;
    }
    return d;
}

int ktree_in_subtree(int k, int n, int r, int x)
{
    if (!valid(k, n, r) || !valid(k, n, x))
        return 0;
    /* Nodes of r's subtree at successive depths: [lo, hi]. */
    long long lo = r, hi = r;
    while (lo <= x) {
        if (x <= hi)
            return 1;
        lo = lo * k + 1;
        hi = hi * k + k;
        if (hi > n)
            hi = n; /* keeps the next step within long long */
        if (lo >= n)
            break;
    }
    return 0;
}

int ktree_next_hop(int k, int n, int from, int to)
{
    if (!valid(k, n, from) || !valid(k, n, to) || from == to)
        return -1;
    if (!ktree_in_subtree(k, n, from, to))
        return ktree_parent(k, n, from);
    /* Climb from `to` until just below `from`. */
    int x = to;
    while (ktree_parent(k, n, x) != from)
        x = ktree_parent(k, n, x);
    return x;
}
