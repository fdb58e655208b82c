/* Compiled with -std=c99 -pedantic -Wall -Wextra -Werror by CTest. */
#include "cadenza/cadenza.h"
#include "cadenza/plugin.h"

int main(void) {
    cdz_pipeline_params params = cdz_pipeline_default_params();
    cdz_plugin_descriptor descriptor;
    (void)params;
    (void)descriptor;
    return 0;
}
