/* strmap.h - a string -> string hash table for the server core's tables that a
 * task can grow (node attributes, published names), and the keyed hash the
 * KVS index shares.
 *
 * Contract:
 *   - Get, set (insert or replace) and delete cost O(1) on average whatever
 *     the keys: buckets are chained and doubled when the table holds more
 *     entries than buckets, and the bucket of a key comes from SipHash-1-3
 *     under a random 128-bit key drawn per table, so a task cannot choose
 *     keys that all land in one chain.
 *   - The table counts its entries and their bytes (strlen of key + value);
 *     quotas are the caller's business (check strmap_count/strmap_bytes and
 *     strmap_get before a set).
 *   - Keys and values are copied.  Not thread safe (the core's one thread).
 */
#ifndef LOOM_PMISERV_STRMAP_H
#define LOOM_PMISERV_STRMAP_H

#include <stddef.h>
#include <stdint.h>

struct strmap;

/* A random hash key (getrandom; falls back to a clock and address mix when
 * the kernel gives nothing, which only weakens collision resistance). */
void strmap_hash_seed(uint64_t key[2]);
/* SipHash-1-3 of the NUL-terminated string s under key. */
uint64_t strmap_hash(const uint64_t key[2], const char *s);

struct strmap *strmap_create(void);
void strmap_destroy(struct strmap *m);
/* Value of key, or NULL. */
const char *strmap_get(const struct strmap *m, const char *key);
/* Insert or replace.  0 or -ENOMEM (the table is then unchanged). */
int strmap_set(struct strmap *m, const char *key, const char *val);
/* Remove key: 0, or -ENOENT. */
int strmap_del(struct strmap *m, const char *key);
size_t strmap_count(const struct strmap *m);
size_t strmap_bytes(const struct strmap *m); /* sum of key and value lengths */

#endif /* LOOM_PMISERV_STRMAP_H */
