/* Shared libraries that are not cadenza plugins, for the loader's tests; they
 * include nothing of cadenza, as a foreign library would not:
 *   EXITING_CONSTRUCTOR  a library whose constructor ends the process (as
 *                        gflags' does when loaded twice); cadenza must never
 *                        load it
 *   ENTRY_IS_DATA        exports cdz_plugin_entry as data, not a function */
#include <stdlib.h>

#ifdef EXITING_CONSTRUCTOR
__attribute__((constructor)) static void end_the_process(void) { _Exit(3); }
__attribute__((visibility("default"))) int foreign_function(void) { return 1; }
#endif

#ifdef ENTRY_IS_DATA
__attribute__((visibility("default"))) const long cdz_plugin_entry[4] = {1, 2, 3, 4};
#endif
