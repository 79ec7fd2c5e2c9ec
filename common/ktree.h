/* ktree.h - k-ary tree arithmetic over nodes 0..n-1, rooted at node 0.
 *
 * Contract: the children of node i are k*i+1 .. k*i+k (those < n); the
 * parent of i > 0 is (i-1)/k.  Used by the fence (gather up, broadcast down)
 * and to route a message hop by hop between any two nodes.  Pure functions;
 * arguments out of range give -1 / 0.
 */
#ifndef LOOM_KTREE_H
#define LOOM_KTREE_H

/* Parent of node i, or -1 for the root (or bad arguments). */
int ktree_parent(int k, int n, int i);
/* Writes the children of i into children[] (room for k) and returns how many. */
int ktree_children(int k, int n, int i, int *children);
/* Depth of node i (root = 0). */
int ktree_depth(int k, int n, int i);
/* Non-zero if node x lies in the subtree rooted at node r (r itself included). */
int ktree_in_subtree(int k, int n, int r, int x);
/* The neighbour of `from` (its parent or one of its children) on the path to
 * `to`; `to` itself if adjacent; -1 if from == to or arguments are bad. */
int ktree_next_hop(int k, int n, int from, int to);

#endif /* LOOM_KTREE_H */
