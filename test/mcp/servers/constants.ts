/** Shared between the test server and the tests that check how its long tool name is exposed. */
export const LONG_TOOL_NAME = "a_tool_name_that_is_exactly_seventy_characters_long_for_hash_tests_xyz";
