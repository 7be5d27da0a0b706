/* SPDX-License-Identifier: MIT */
/* Standalone entry of `topdown validate` (build/topdown-validate). */
#include "validate.h"

int main(int argc, char **argv)
{
	return td_cmd_validate(argc, argv, argv, NULL);
}
