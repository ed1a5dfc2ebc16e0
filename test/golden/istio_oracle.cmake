# Sets MESHOP_ISTIO_MODULE_DIR to the pinned istio.io/istio module directory when Go is on the
# PATH and the module is in the module cache (bash hack/istio-module.sh downloads it), else "".
# The injection golden and differential tests are registered only when it is set.
if(NOT DEFINED MESHOP_ISTIO_MODULE_DIR)
  set(MESHOP_ISTIO_MODULE_DIR "")
  find_program(MESHOP_GO_PROGRAM go)
  file(STRINGS ${CMAKE_SOURCE_DIR}/hack/lib/versions.sh meshop_istio_pin
       REGEX "^ISTIO_MODULE_VERSION=")
  string(REGEX REPLACE "^ISTIO_MODULE_VERSION=" "" MESHOP_ISTIO_PIN "${meshop_istio_pin}")
  if(MESHOP_GO_PROGRAM)
    execute_process(COMMAND ${MESHOP_GO_PROGRAM} env GOMODCACHE
                    OUTPUT_VARIABLE meshop_gomodcache OUTPUT_STRIP_TRAILING_WHITESPACE
                    RESULT_VARIABLE meshop_go_rc)
    if(meshop_go_rc EQUAL 0 AND EXISTS "${meshop_gomodcache}/istio.io/istio@${MESHOP_ISTIO_PIN}")
      set(MESHOP_ISTIO_MODULE_DIR "${meshop_gomodcache}/istio.io/istio@${MESHOP_ISTIO_PIN}")
    endif()
  endif()
endif()
