/* fuzz_pmap.c - libFuzzer target: the client's parsers of server-given attribute
 * values: PMI_process_mapping (loom_pmap_parse) and integer lists (pcli_parse_intlist,
 * behind PMI2_Info_Get*IntArray).
 *
 * fuzz-sources: common/pmap.c libpmi2/pcli.c common/pmi_wire.c
 * fuzz-cflags: -Icommon -Ilibpmi2
 *
 * Contract: input = 2 bytes of job size (1 + value % 4096) then the attribute text.
 * loom_pmap_parse must fill exactly size entries of an exact-size heap array with node
 * indices >= 0 or fail with -EINVAL; pcli_parse_intlist must write at most arraylen
 * ints and report 0 <= outlen <= arraylen.  Both must finish quickly whatever the
 * repeat counts say (the expansion of "[...]xN" is bounded).
 * Seeds: corpus/pmap/ (mappings MPICH, Slurm and loom produce; the grammar's corners).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pcli.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2)
        return 0;
    int n = 1 + ((data[0] | data[1] << 8) % 4096);
    char *s = malloc(size - 1);
    if (!s)
        return 0;
    memcpy(s, data + 2, size - 2);
    s[size - 2] = '\0';

    int *node = malloc(sizeof(int) * (size_t)n);
    if (node && loom_pmap_parse(s, n, node) == 0) {
        for (int i = 0; i < n; i++)
            if (node[i] < 0)
                __builtin_trap();
    }
    free(node);

    int arr[4], outlen = -1;
    if (pcli_parse_intlist(s, arr, 4, &outlen) == 0 && (outlen < 0 || outlen > 4))
        __builtin_trap();
    free(s);
    return 0;
}
