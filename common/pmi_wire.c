/* pmi_wire.c - see pmi_wire.h */
#include "pmi_wire.h"
