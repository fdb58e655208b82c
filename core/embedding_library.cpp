// libcadenza.so is cadenza_core linked whole; its exported surface is the
// cdz_ functions of cadenza.h (see exported_symbols.map).
#include "cadenza/cadenza.h"
