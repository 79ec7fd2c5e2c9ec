/* ktree.c - see ktree.h */
#include "ktree.h"
