/* pack.c - see pack.h */
#include "pack.h"
