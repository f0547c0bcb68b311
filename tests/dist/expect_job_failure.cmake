# Runs a job that must fail, and checks that it ends: with a non-zero status, within TIMEOUT
# seconds, and with output matching EXPECT. The failure tests of tests/dist/CMakeLists.txt:
#
#   cmake -DMPIEXEC=mpiexec -DRANKS=2 -DPROGRAM=ember_dist_rank_failure -DMODE=throw
#         -DEXPECT="rank 1 of 2: rank 1 failed on purpose" -DTIMEOUT=30 -P expect_job_failure.cmake
string(TIMESTAMP start "%s")
execute_process(COMMAND ${MPIEXEC} -n ${RANKS} ${PROGRAM} ${MODE} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                ERROR_VARIABLE err TIMEOUT ${TIMEOUT})
string(TIMESTAMP end "%s")
math(EXPR seconds "${end} - ${start}")
message("--- stdout\n${out}--- stderr\n${err}--- status ${rc} after ${seconds} s")
if(rc MATCHES "timeout")
  message(FATAL_ERROR "the job did not end within ${TIMEOUT} s: a rank hangs")
elseif(rc STREQUAL "0")
  message(FATAL_ERROR "the job ended with status 0; a failing rank must end it with an error")
elseif(NOT "${out}${err}" MATCHES "${EXPECT}")
  message(FATAL_ERROR "the job failed (status ${rc}), but its output does not say '${EXPECT}'")
endif()
